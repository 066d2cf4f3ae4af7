/**
 * Every environment variable the fleet reads, declared once, at the `Config` field it sets: its
 * parser and default, its README row and how it compiles. `Config`, the env schema, the README
 * table (`npm run -s docs:config`) and `fleet env` are all derived from this object; the README
 * table lists the variables in this order.
 */
import { API_TOKEN_PATTERN } from './api-tokens.js';
import { DEFAULT_TREE_LIMITS } from '../tree/tree-limits.js';
import { derived, fixed, variable } from './config-variable.js';
import { deepFreeze } from './deep-freeze.js';
import { absolutePath, adminPassword, clusterNodes, httpHost, MIN_ADMIN_PASSWORD_CHARS, objectGraceMs, requireRedisPassword, requireTokensForHostNetwork, rootUnderHome } from './config-rules.js';
import { anyText, DAY, durationMs, flag, HOUR, integer, list, listOrNull, matching, oneOf, percentage } from './env-fields.js';
import { gcSchedule } from './gc-schedule.js';
import { uidRange } from './uid-range.js';

// A root directory that defaults to `dir` under FLEET_HOME.
const root = <const N extends string>(name: N, dir: string, doc: string) => variable(name, anyText(null), { default: `$FLEET_HOME/${dir}`, doc }, rootUnderHome(dir));

// Names never copied into a bake's setup commands: the fleet's own settings and anything secret-looking.
const FLEET_OWN = /^(FLEET_|REDIS_|VERCEL_)/;
const SECRET_LOOKING = /(TOKEN|SECRET|PASSWORD|PASSWD|KEY|CREDENTIAL|PRIVATE|AUTH)/i;

// Frozen: the records are the one source of every variable; nothing may rewire them at run time.
export const CONFIG_SHAPE = deepFreeze({
  redis: {
    /** `null` means embedded mode: `fleet up` runs a private redis-server. */
    url: variable(
      'REDIS_URL',
      matching(/^rediss?:\/\/\S+$/, 'a redis:// or rediss:// URL (unset = embedded redis-server)', null),
      { default: '(unset: embedded)', doc: 'Redis to use; unset makes `fleet up` run a private redis-server under `.fleet/redis`', secret: true },
      requireRedisPassword,
    ),
    /** Seed nodes of a Redis Cluster (`null`: one server, REDIS_URL or embedded). */
    clusterNodes: variable(
      'FLEET_REDIS_CLUSTER_NODES',
      listOrNull(/^[A-Za-z0-9.-]{1,253}:\d{1,5}$/, 'host:port seed nodes of a Redis Cluster, e.g. 10.0.0.1:7000,10.0.0.2:7000'),
      { default: '(unset: one server)', doc: 'Seed nodes of a Redis Cluster (`host:port,...`); with it every role uses the cluster and REDIS_URL is not used' },
      clusterNodes,
    ),
    /** Password of every cluster node (AUTH); required with cluster nodes unless FLEET_LOCAL_ISOLATION=none. */
    clusterPassword: variable('FLEET_REDIS_PASSWORD', anyText(null), { default: '(unset)', doc: 'Password of the Redis Cluster nodes (with FLEET_REDIS_CLUSTER_NODES)', secret: true }),
    prefix: variable('FLEET_PREFIX', matching(/^[^\s:]*\{[^{}\s]+\}[^\s:]*$/, 'a key prefix containing a {hash-tag}, e.g. {fleet}', '{fleet}'), {
      doc: 'Hash-tagged prefix of every queue and key (Redis Cluster-safe)',
    }),
    /**
     * Where keys hash: `single-slot` (every key under FLEET_PREFIX's one tag, as every release
     * before this setting), `per-queue` (each queue its own tag derived from the prefix's, so a
     * Redis Cluster spreads the queues over its masters) or `sharded` (queues as `per-queue`, and
     * each workspace's state in one of 128 bucket tags; see keys.ts and docs/capacity.md).
     */
    keyLayout: variable('FLEET_REDIS_KEY_LAYOUT', oneOf(['single-slot', 'per-queue', 'sharded'] as const, 'single-slot'), {
      doc: 'Hash tags: `single-slot` (every key in one slot), `per-queue` (a tag per queue) or `sharded` (a tag per queue and per workspace bucket), spread over a cluster; changing it needs `fleet redis migrate-keys` (README)',
    }),
    commandTimeoutMs: variable('FLEET_REDIS_COMMAND_TIMEOUT_MS', durationMs(5_000, 50, 10 * 60_000), { doc: 'Command timeout of non-worker Redis connections' }),
  },
  provider: variable('FLEET_PROVIDER', oneOf(['local', 'vercel'] as const, 'local'), { doc: 'Sandbox provider for new workspaces: `local` or `vercel`' }),
  hostId: variable('FLEET_HOST_ID', matching(/^[A-Za-z0-9_-]{1,64}$/, 'a host id of 1-64 letters, digits, _ or -', 'local'), {
    doc: 'This host id; host-bound queues are `<queue>@<hostId>`',
  }),
  hostCapacity: variable('FLEET_HOST_CAPACITY', integer(100, 1, 100_000), { doc: 'Local sandboxes this host is sized for; new ones go to the least-loaded live host' }),
  paths: {
    home: variable('FLEET_HOME', anyText('.fleet'), { doc: 'State directory (embedded Redis, default roots)' }, absolutePath),
    liveRoot: root('FLEET_LIVE_ROOT', 'live', 'Live workspace trees of the local provider'),
    archiveRoot: root('FLEET_ARCHIVE_ROOT', 'archive', 'Archive of immutable revisions (may be shared, e.g. NFS)'),
    snapshotRoot: root('FLEET_SNAPSHOT_ROOT', 'snapshots', 'Base snapshots of the local provider'),
    legacyRoot: root('FLEET_LEGACY_ROOT', 'legacy', 'Legacy flat blob store read by backfill'),
    vercelMirrorRoot: root(
      'FLEET_VERCEL_MIRROR_ROOT',
      'vercel-mirrors',
      'Per-workspace host state of Vercel sandboxes (0700): the index of the file versions a format 2 persist archived, its lock, and the mirror of the tree that format 1 and backfill read',
    ),
  },
  checkpointIntervalMs: variable('FLEET_CHECKPOINT_INTERVAL_MS', durationMs(30_000, 1_000), { doc: 'Checkpoint interval per active workspace' }),
  idleTtlMs: variable('FLEET_IDLE_TTL_MS', durationMs(15 * 60_000, 1_000), {
    doc: 'Quiet time (no turn open, no exec or file operation running, no activity) after which a workspace is flushed and stopped',
  }),
  turnTtlMs: variable('FLEET_TURN_TTL_MS', durationMs(HOUR, 1_000, DAY), { doc: 'Longest a turn stays open without being opened again or closed' }),
  shutdown: {
    graceMs: variable('FLEET_SHUTDOWN_GRACE_MS', durationMs(25_000, 100, 10 * 60_000), { doc: 'How long a stopping worker lets active jobs finish' }),
    flushMs: variable('FLEET_SHUTDOWN_FLUSH_MS', durationMs(10_000, 0, 10 * 60_000), { doc: 'Time box of the shutdown flush of held workspaces (0 = no flush)' }),
  },
  http: {
    host: variable(
      'FLEET_HTTP_HOST',
      anyText(null),
      {
        default: '127.0.0.1 (0.0.0.0 with tokens)',
        doc: 'Address the HTTP server binds; without `FLEET_API_TOKENS` the API and the board answer loopback clients only (403 otherwise) while `/healthz`, `/readyz` and `/metrics` answer on this address, and start-up logs a warning saying so',
      },
      httpHost,
    ),
    port: variable('FLEET_HTTP_PORT', integer(7400, 0, 65_535), { doc: 'Port of the HTTP API, Bull Board and /metrics (0 = any free port)' }),
    apiTokens: variable('FLEET_API_TOKENS', list(API_TOKEN_PATTERN, 'tokens of at least 16 characters without spaces or ";", each optionally followed by ;scope=app|operator and ;workspaces=<pattern>', []), {
      default: '(none: loopback only)',
      doc: 'Comma-separated bearer tokens of the HTTP API, each ≥ 16 characters; `<token>;scope=app|operator;workspaces=team-a-*` limits one to app or operator routes and to matching workspace ids',
      secret: true,
    }),
    waitCapMs: variable('FLEET_HTTP_WAIT_CAP_MS', durationMs(60_000, 100, HOUR), {
      doc: 'Longest wait of `?wait=true` on the HTTP API (a request asking longer is cut to it; 504 after)',
    }),
    fileMaxBytes: variable('FLEET_FILE_MAX_BYTES', integer(16 * 1024 * 1024, 1, 1024 * 1024 * 1024, ' of bytes'), {
      doc: 'Largest file read or written through the workspace file API (`/v1/workspaces/{id}/files/...`, `fleet files`; 413 above)',
    }),
    publicUrl: variable('FLEET_PUBLIC_URL', matching(/^https?:\/\/([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(:\d{1,5})?\/?$/, 'an http(s) origin like https://fleet.example.com (scheme, host and port only)', null), {
      default: '(none)',
      doc: 'The origin browsers reach this service by behind a proxy (`https://fleet.example.com`): Bull Board accepts state changes whose `Origin` names it as well as the `Host` the request arrived with',
    }),
    bodyLimitBytes: variable('FLEET_HTTP_BODY_LIMIT_BYTES', integer(2 * 1024 * 1024, 1_024, 256 * 1024 * 1024, ' of bytes'), {
      doc: 'Largest request body the HTTP API accepts (413 above)',
    }),
  },
  admin: {
    password: variable('FLEET_ADMIN_PASSWORD', anyText(null), { default: '(none: board disabled)', doc: `Password of Bull Board at /admin/queues (user \`admin\`), at least ${MIN_ADMIN_PASSWORD_CHARS} characters`, secret: true }, adminPassword),
    readOnly: variable('FLEET_ADMIN_READONLY', flag(false), { doc: 'Make Bull Board read-only on every queue' }),
  },
  quota: {
    bytes: variable('FLEET_WORKSPACE_QUOTA_BYTES', integer(0, 0, Number.MAX_SAFE_INTEGER, ' of bytes'), {
      doc: 'Hard limit of a workspace\'s bytes (0 = none): writes through the API beyond it are refused (507 QuotaExceeded); a persist never refuses, it marks the workspace over quota',
    }),
    files: variable('FLEET_WORKSPACE_QUOTA_FILES', integer(0, 0, Number.MAX_SAFE_INTEGER), {
      doc: 'Hard limit of a workspace\'s files (0 = none), kept like FLEET_WORKSPACE_QUOTA_BYTES',
    }),
  },
  logLevel: variable('FLEET_LOG_LEVEL', oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info'), { doc: 'pino log level' }),
  logFormat: variable('FLEET_LOG_FORMAT', oneOf(['auto', 'json', 'pretty'] as const, 'auto'), {
    doc: 'Log lines on stderr: `json` (one JSON object a line, for collectors), `pretty` (a readable, colored line per record, its fields and stack indented below it) or `auto`: pretty on a terminal, JSON otherwise',
  }),
  tracing: {
    endpoint: variable('FLEET_OTEL_ENDPOINT', matching(/^https?:\/\/\S+$/, 'an http(s) URL of an OTLP/HTTP traces endpoint like http://collector:4318/v1/traces', null), {
      default: '(none: tracing off)',
      doc: 'OpenTelemetry traces: where spans go (OTLP over HTTP, JSON), from the HTTP request through BullMQ\'s add and process spans to provider calls and rsync runs, context carried in the jobs; unset, tracing is off',
    }),
    serviceName: variable('FLEET_OTEL_SERVICE_NAME', matching(/^[A-Za-z0-9._-]{1,64}$/, '1-64 letters, digits, ., _ or -', 'sandbox-fleet'), { doc: 'The `service.name` of this process\'s spans' }),
  },
  worker: {
    /** `null` = each queue's own default (see queues/index.ts). */
    concurrency: variable('FLEET_CONCURRENCY', integer(null, 1, 256), {
      default: '(per queue: provision 16, persist 4, checkpoint 8, backfill 2, gc 2, bake 1)',
      doc: 'Jobs run at once per queue per worker process (overrides every queue)',
    }),
    lockDurationMs: variable('FLEET_LOCK_DURATION_MS', durationMs(30_000, 500, HOUR), { doc: 'BullMQ job lock duration' }),
    stalledIntervalMs: variable('FLEET_STALLED_INTERVAL_MS', durationMs(30_000, 100, HOUR), { doc: 'BullMQ stalled-job check interval' }),
    maxStalledCount: variable('FLEET_MAX_STALLED_COUNT', integer(3, 0, 100), { doc: 'Stalls (crashed workers) a job survives before it fails' }),
    heartbeatIntervalMs: variable('FLEET_HEARTBEAT_INTERVAL_MS', durationMs(5_000, 100, 10 * 60_000), { doc: 'Worker/host heartbeat interval' }),
    lockTtlMs: variable('FLEET_LOCK_TTL_MS', durationMs(10_000, 200, 10 * 60_000), { doc: 'TTL of single-flight (Redlock) locks, extended while held' }),
  },
  deadlines: {
    provisionMs: variable('FLEET_PROVISION_DEADLINE_MS', durationMs(5 * 60_000, 100), { doc: 'Deadline of one provision job' }),
    persistMs: variable('FLEET_PERSIST_DEADLINE_MS', durationMs(10 * 60_000, 100), { doc: 'Deadline of one persist/checkpoint job' }),
    bakeMs: variable('FLEET_BAKE_DEADLINE_MS', durationMs(30 * 60_000, 100), { doc: 'Deadline of one bake job' }),
    backfillMs: variable('FLEET_BACKFILL_DEADLINE_MS', durationMs(30 * 60_000, 100), { doc: 'Deadline of one backfill job' }),
    gcMs: variable('FLEET_GC_DEADLINE_MS', durationMs(10 * 60_000, 100), { doc: 'Deadline of one gc job' }),
    execMs: variable('FLEET_EXEC_DEADLINE_MS', durationMs(60_000, 100), { doc: 'Default deadline of `fleet exec`' }),
  },
  exec: {
    envAllowlist: variable('FLEET_EXEC_ENV_ALLOWLIST', list(/^[A-Za-z_][A-Za-z0-9_]*$/, 'environment variable names', ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TERM', 'TZ']), {
      doc: 'Environment passed to commands run in a workspace',
    }),
    /** Values of the allowlisted variables taken from the fleet's environment at start-up. */
    env: derived(({ env, parsed }): Readonly<Record<string, string>> =>
      Object.fromEntries(parsed.FLEET_EXEC_ENV_ALLOWLIST.flatMap((name) => (env[name] === undefined ? [] : [[name, env[name]]]))),
    ),
  },
  /** How the local provider contains the commands it runs (see src/sandbox/). */
  sandbox: {
    isolation: variable('FLEET_LOCAL_ISOLATION', oneOf(['auto', 'namespaces', 'none'] as const, 'auto'), {
      doc: 'How local sandboxes are contained: `namespaces` (bubblewrap, a uid per workspace), `none` (the fleet user, whole host in view: development only), `auto` (namespaces when the start-up probe passes, else none with a warning)',
    }),
    network: variable(
      'FLEET_SANDBOX_NETWORK',
      oneOf(['none', 'host'] as const, 'none'),
      { doc: 'Network of a namespaced sandbox: `none` (its own loopback only) or `host` (needs `FLEET_API_TOKENS`)' },
      requireTokensForHostNetwork,
    ),
    uidRange: variable('FLEET_SANDBOX_UID_RANGE', uidRange({ first: 200_000, last: 299_999 }), { doc: 'Uids given to workspaces, one each, never shared or reused' }),
    /** Limits of one sandboxed command: rlimits always, cgroup v2 limits where the tree is delegable. */
    limits: {
      pids: variable('FLEET_SANDBOX_PIDS', integer(512, 16, 1_000_000), { doc: 'Processes of one workspace (RLIMIT_NPROC of its uid; cgroup pids.max where delegable)' }),
      fileBytes: variable('FLEET_SANDBOX_FILE_BYTES', integer(4 * 1024 ** 3, 1_024 * 1_024, Number.MAX_SAFE_INTEGER, ' of bytes'), {
        doc: 'Largest file a sandboxed command may write (RLIMIT_FSIZE)',
      }),
      openFiles: variable('FLEET_SANDBOX_OPEN_FILES', integer(4_096, 64, 1_048_576), { doc: 'Open files per sandboxed process (RLIMIT_NOFILE)' }),
      cpuSeconds: variable('FLEET_SANDBOX_CPU_SECONDS', integer(3_600, 0, 31 * 24 * 3_600, ' of seconds'), { doc: 'CPU seconds per sandboxed process (RLIMIT_CPU; 0 = unlimited)' }),
      memoryMb: variable('FLEET_SANDBOX_MEMORY_MB', integer(4_096, 16, 16 * 1024 * 1024), {
        doc: 'Memory of one sandboxed command (cgroup memory.max; only where the cgroup v2 tree is delegable)',
      }),
      cpuWeight: variable('FLEET_SANDBOX_CPU_WEIGHT', integer(100, 1, 10_000), { doc: 'CPU weight of one sandboxed command (cgroup cpu.weight; only where delegable)' }),
      // A tmpfs, so it counts as memory.
      tmpMb: variable('FLEET_SANDBOX_TMP_MB', integer(256, 1, 1024 * 1024), { doc: 'Size of the private /tmp of a sandboxed command (tmpfs)' }),
    },
    cgroupRoot: variable('FLEET_SANDBOX_CGROUP_ROOT', anyText('/sys/fs/cgroup'), { doc: 'cgroup v2 mount under which per-command cgroups are made when it is delegable' }, absolutePath),
  },
  /** PATH used to find system tools (rsync, tar, redis-server). */
  systemPath: derived(({ env }) => env.PATH ?? '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'),
  /** Most bytes a base manifest's `overlay` may write into a new workspace (checked at bake and when applied). */
  baseOverlayMaxBytes: variable('FLEET_BASE_OVERLAY_MAX_BYTES', integer(256 * 1024, 0, 64 * 1024 * 1024, ' of bytes'), {
    doc: "Most bytes a base manifest's `overlay` writes into each new workspace made from the base; a bake over it fails, and so does (as `error`) a provision whose base's overlay is over it",
  }),
  /** Variables a base manifest's `envAllowlist` may copy into setup commands. */
  bakeEnvSource: derived(({ env }): Readonly<Record<string, string>> =>
    Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined && !FLEET_OWN.test(entry[0]) && !SECRET_LOOKING.test(entry[0]))),
  ),
  archiveFormat: variable(
    'FLEET_ARCHIVE_FORMAT',
    oneOf(['1', '2'] as const, '2'),
    { doc: 'Format of new revisions: `2` content-addressed objects and trees (docs/archive-format.md), `1` hard-linked trees (the default before format 2); both are read' },
    (format): 1 | 2 => (format === '1' ? 1 : 2),
  ),
  treePatches: variable('FLEET_ARCHIVE_TREE_PATCHES', flag(true), {
    doc: 'Format 2 persists store a changed directory as a patch of its previous tree when the patch is at most half the bytes of the whole tree (docs/archive-format.md, "Tree patches"); `false` stores every tree whole. Fleets before tree patches cannot read them: keep `false` until no such process reads the archive',
  }),
  packObjects: variable('FLEET_ARCHIVE_PACKS', flag(true), {
    doc: 'Format 2 persists (local and Vercel) and bakes write the small objects (up to 256 KiB) their writer thread places as packs of up to 64 (docs/archive-format.md, "Packs") instead of a file each. Every reader takes packed objects whatever this says; the objects GC removes a pack once none of its objects is reachable, and repacks one whose unreachable objects hold half its bytes or more. Fleets before packs cannot read them: roll a new version out with `false`, then turn it on once no older process reads the archive',
  }),
  restoreViaTar: variable('FLEET_RESTORE_TAR', flag(true), {
    doc: 'Local restores of format 2 revisions stream the revision from the archive into the host\'s GNU `tar -x`, which makes the files while the fleet reads the objects; `false` makes every file from the fleet\'s process (the restore before). A tar that fails is logged and the revision is made the other way',
  }),
  changeScan: variable('FLEET_PERSIST_CHANGE_SCAN', flag(true), {
    doc: 'Format 2 persists find the directories that changed since the last walk of the same tree with one `find` over its ctimes and take the others from the previous revision by id (a full walk at least every 10 minutes); `false` walks every directory every time',
  }),
  /** What one persist takes from a live tree (entries over a limit are refused; the rest is archived). */
  treeLimits: {
    maxDepth: variable('FLEET_TREE_MAX_DEPTH', integer(DEFAULT_TREE_LIMITS.maxDepth, 8, 4_096), {
      doc: 'Deepest directory level a persist walks; deeper entries are refused (the rest is archived)',
    }),
    maxPathBytes: fixed(DEFAULT_TREE_LIMITS.maxPathBytes),
    maxEntries: variable('FLEET_TREE_MAX_ENTRIES', integer(DEFAULT_TREE_LIMITS.maxEntries, 1_000, 100_000_000), {
      doc: 'Most entries a persist takes from one live tree; the rest are refused',
    }),
    maxFileBytes: variable('FLEET_TREE_MAX_FILE_BYTES', integer(DEFAULT_TREE_LIMITS.maxFileBytes, 1_024, Number.MAX_SAFE_INTEGER, ' of bytes'), {
      doc: 'Largest file a persist copies (16 GiB); larger files are refused and keep their archived version',
    }),
    maxNewFifos: fixed(DEFAULT_TREE_LIMITS.maxNewFifos),
  },
  retention: {
    shrinkGuardPct: variable('FLEET_SHRINK_GUARD_PCT', integer(50, 0, 100), { doc: 'A reconcile removing more than this % of files is refused without force' }),
    keepRevisions: variable('FLEET_KEEP_REVISIONS', integer(20, 1, 100_000), { doc: 'Attached revisions kept per workspace (plus younger ones)' }),
    keepRevisionsMinAgeMs: variable('FLEET_KEEP_REVISIONS_MIN_AGE_MS', durationMs(DAY, 0), { doc: 'Revisions younger than this are always kept' }),
    unattachedGraceMs: variable('FLEET_UNATTACHED_GRACE_MS', durationMs(HOUR, 0), { doc: 'Age after which unattached revisions are collectable' }),
    objectGraceMs: variable(
      'FLEET_OBJECT_GRACE_MS',
      durationMs(null, 1, 365 * DAY),
      {
        default: '(3 × the longer of the persist and backfill deadlines)',
        doc: 'Age an unreachable format 2 object or tree (and a `.store/tmp` temporary) must reach before GC deletes it; must exceed twice the longer deadline',
      },
      objectGraceMs,
    ),
    baseRetentionMs: variable('FLEET_BASE_RETENTION_MS', durationMs(14 * DAY, 0, 3650 * DAY), { doc: 'How long an unreferenced base snapshot is kept after it stopped being active or the rollback target (or after creation, if never active) before `fleet gc --kind bases` may retire it' }),
    gcSchedule: variable('FLEET_GC_SCHEDULE', gcSchedule(), { doc: 'GC schedule per kind: milliseconds between runs, a cron pattern in parentheses (UTC, `retention=(0 3 * * *)`; not for `orphans`, which each host runs on its own timer), or `off`' }),
  },
  verify: {
    readDataPct: variable('FLEET_VERIFY_READ_DATA_PCT', percentage(1), {
      doc: 'Percentage of the object id space the scheduled `verify` GC kind re-reads per run, rotating through all of it across runs',
    }),
  },
  vercel: {
    token: variable('FLEET_VERCEL_TOKEN', anyText(null), { default: '(none)', doc: 'Vercel access token', secret: true }),
    teamId: variable('FLEET_VERCEL_TEAM_ID', anyText(null), { default: '(none)', doc: 'Vercel team id' }),
    projectId: variable('FLEET_VERCEL_PROJECT_ID', anyText(null), { default: '(none)', doc: 'Vercel project id' }),
    apiUrl: variable('FLEET_VERCEL_API_URL', matching(/^https?:\/\/\S+$/, 'an http:// or https:// URL', null), {
      default: '(Vercel default)',
      doc: 'Override of the Vercel API base URL (proxies, tests)',
    }),
    oidcToken: variable('VERCEL_OIDC_TOKEN', anyText(null), { default: '(none)', doc: 'OIDC token used when no access token is configured', secret: true }),
    /** Stop snapshots the filesystem; resume restores it. */
    persistent: variable('FLEET_VERCEL_PERSISTENT', flag(true), { doc: 'Create persistent Vercel sandboxes' }),
    /** Sent at create. */
    sandboxTimeoutMs: variable('FLEET_VERCEL_SANDBOX_TIMEOUT_MS', durationMs(45 * 60_000, 60_000, DAY), { doc: 'Vercel session lifetime' }),
  },
});
