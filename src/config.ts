/**
 * The fleet's configuration: every environment variable is read here and nowhere else, parsed
 * once by one zod schema into a frozen, fully-defaulted `Config` with durations in milliseconds.
 *
 * A bad value fails start-up with one line naming the variable, the expectation and the value
 * (see `ConfigError`). The README's configuration table mirrors `CONFIG_VARIABLES`.
 */
import path from 'node:path';
import { z } from 'zod';
import { ConfigError } from './errors/config-error.js';
import { DEFAULT_TREE_LIMITS, type TreeLimits } from './tree/tree-limits.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

// Turns a raw env string into a value or reports the human expectation for the one-line error.
function field<T>(expectation: string, parse: (raw: string) => T | undefined, fallback: T | (() => T)) {
  return z
    .string()
    .optional()
    .transform((raw, ctx): T => {
      if (raw === undefined || raw.trim() === '') return typeof fallback === 'function' ? (fallback as () => T)() : fallback;
      const value = parse(raw.trim());
      if (value === undefined) {
        ctx.addIssue({ code: 'custom', message: expectation });
        return z.NEVER;
      }
      return value;
    });
}

// A whole number in [min, max].
function integer(fallback: number, min: number, max: number, unit = '') {
  const expectation = `a whole number${unit} between ${min} and ${max}`;
  return field(expectation, (raw) => (/^\d+$/.test(raw) && Number(raw) >= min && Number(raw) <= max ? Number(raw) : undefined), fallback);
}

// A duration in milliseconds in [min, max].
function durationMs(fallback: number, min = 1, max = 30 * DAY) {
  return integer(fallback, min, max, ' of milliseconds');
}

// One of a fixed set of words.
function oneOf<const T extends string>(values: readonly T[], fallback: T) {
  return field(`one of ${values.join(', ')}`, (raw) => (values as readonly string[]).includes(raw) ? (raw as T) : undefined, fallback);
}

// A boolean spelled true/false/1/0/yes/no.
function flag(fallback: boolean) {
  return field('true or false', (raw) => ({ true: true, '1': true, yes: true, false: false, '0': false, no: false })[raw.toLowerCase()], fallback);
}

// A string matching a pattern.
function matching(pattern: RegExp, expectation: string, fallback: string | null) {
  return field<string | null>(expectation, (raw) => (pattern.test(raw) ? raw : undefined), fallback);
}

// A comma-separated list of items each matching a pattern.
function list(pattern: RegExp, expectation: string, fallback: readonly string[]) {
  return field<readonly string[]>(
    `a comma-separated list of ${expectation}`,
    (raw) => {
      const items = raw.split(',').map((item) => item.trim()).filter((item) => item !== '');
      return items.every((item) => pattern.test(item)) ? Object.freeze(items) : undefined;
    },
    fallback,
  );
}

/** GC kinds and their default schedule (ms between runs; 0 = off). */
export const GC_SCHEDULE_DEFAULTS = Object.freeze({
  unattached: 3_600_000,
  retention: 3_600_000,
  litter: 3_600_000,
  bases: 86_400_000,
  orphans: 600_000,
  idle: 60_000,
  objects: 3_600_000,
  verify: 86_400_000,
});
type GcScheduleMap = Readonly<Record<keyof typeof GC_SCHEDULE_DEFAULTS, number>>;

// `kind=ms|off,...` over the defaults.
function gcSchedule() {
  return field<GcScheduleMap>(
    `a comma-separated list of kind=milliseconds|off with kinds ${Object.keys(GC_SCHEDULE_DEFAULTS).join(', ')}`,
    (raw) => {
      const out: Record<string, number> = { ...GC_SCHEDULE_DEFAULTS };
      for (const part of raw.split(',').map((p) => p.trim()).filter(Boolean)) {
        const match = /^([a-z]+)=(off|\d+)$/.exec(part);
        if (!match || !(match[1]! in GC_SCHEDULE_DEFAULTS)) return undefined;
        const ms = match[2] === 'off' ? 0 : Number(match[2]);
        if (ms !== 0 && ms < 1_000) return undefined;
        out[match[1]!] = ms;
      }
      return Object.freeze(out) as GcScheduleMap;
    },
    GC_SCHEDULE_DEFAULTS,
  );
}

const anyText = (fallback: string | null) => field<string | null>('a non-empty string', (raw) => raw, fallback);

/** Sandbox uids: one per workspace, never 0, never a system or `nobody` (65534) uid. */
export interface UidRange {
  readonly first: number;
  readonly last: number;
}
const UID_MIN = 65_536;
const UID_MAX = 2_147_483_647;

// `first-last`, both inside [UID_MIN, UID_MAX].
function uidRange(fallback: UidRange) {
  return field<UidRange>(
    `a range first-last of uids between ${UID_MIN} and ${UID_MAX}, first <= last`,
    (raw) => {
      const match = /^(\d+)-(\d+)$/.exec(raw);
      if (!match) return undefined;
      const [first, last] = [Number(match[1]), Number(match[2])];
      return first >= UID_MIN && last <= UID_MAX && first <= last ? Object.freeze({ first, last }) : undefined;
    },
    fallback,
  );
}

/** The raw environment schema: one entry per variable, in README order. */
export const EnvSchema = z.object({
  REDIS_URL: matching(/^rediss?:\/\/\S+$/, 'a redis:// or rediss:// URL (unset = embedded redis-server)', null),
  FLEET_PREFIX: matching(/^[^\s:]*\{[^{}\s]+\}[^\s:]*$/, 'a key prefix containing a {hash-tag}, e.g. {fleet}', '{fleet}'),
  FLEET_PROVIDER: oneOf(['local', 'vercel'] as const, 'local'),
  FLEET_HOST_CAPACITY: integer(100, 1, 100_000),
  FLEET_HOST_ID: matching(/^[A-Za-z0-9_-]{1,64}$/, 'a host id of 1-64 letters, digits, _ or -', 'local'),
  FLEET_HOME: anyText('.fleet'),
  FLEET_LIVE_ROOT: anyText(null),
  FLEET_ARCHIVE_ROOT: anyText(null),
  FLEET_SNAPSHOT_ROOT: anyText(null),
  FLEET_LEGACY_ROOT: anyText(null),
  FLEET_VERCEL_MIRROR_ROOT: anyText(null),
  FLEET_CHECKPOINT_INTERVAL_MS: durationMs(30_000, 1_000),
  FLEET_IDLE_TTL_MS: durationMs(15 * 60_000, 1_000),
  FLEET_TURN_TTL_MS: durationMs(HOUR, 1_000, DAY),
  FLEET_SHUTDOWN_GRACE_MS: durationMs(25_000, 100, 10 * 60_000),
  FLEET_SHUTDOWN_FLUSH_MS: durationMs(10_000, 0, 10 * 60_000),
  FLEET_HTTP_HOST: anyText(null),
  FLEET_HTTP_PORT: integer(7400, 0, 65_535),
  FLEET_HTTP_WAIT_CAP_MS: durationMs(60_000, 100, HOUR),
  FLEET_HTTP_BODY_LIMIT_BYTES: integer(2 * 1024 * 1024, 1_024, 256 * 1024 * 1024, ' of bytes'),
  FLEET_LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info'),
  FLEET_CONCURRENCY: field<number | null>('a whole number between 1 and 256', (raw) => (/^\d+$/.test(raw) && Number(raw) >= 1 && Number(raw) <= 256 ? Number(raw) : undefined), null),
  FLEET_LOCK_DURATION_MS: durationMs(30_000, 500, HOUR),
  FLEET_STALLED_INTERVAL_MS: durationMs(30_000, 100, HOUR),
  FLEET_MAX_STALLED_COUNT: integer(3, 0, 100),
  FLEET_REDIS_COMMAND_TIMEOUT_MS: durationMs(5_000, 50, 10 * 60_000),
  FLEET_LOCK_TTL_MS: durationMs(10_000, 200, 10 * 60_000),
  FLEET_HEARTBEAT_INTERVAL_MS: durationMs(5_000, 100, 10 * 60_000),
  FLEET_PROVISION_DEADLINE_MS: durationMs(5 * 60_000, 100),
  FLEET_PERSIST_DEADLINE_MS: durationMs(10 * 60_000, 100),
  FLEET_BAKE_DEADLINE_MS: durationMs(30 * 60_000, 100),
  FLEET_BACKFILL_DEADLINE_MS: durationMs(30 * 60_000, 100),
  FLEET_GC_DEADLINE_MS: durationMs(10 * 60_000, 100),
  FLEET_EXEC_DEADLINE_MS: durationMs(60_000, 100),
  FLEET_EXEC_ENV_ALLOWLIST: list(/^[A-Za-z_][A-Za-z0-9_]*$/, 'environment variable names', ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TERM', 'TZ']),
  FLEET_LOCAL_ISOLATION: oneOf(['auto', 'namespaces', 'none'] as const, 'auto'),
  FLEET_SANDBOX_NETWORK: oneOf(['none', 'host'] as const, 'none'),
  FLEET_SANDBOX_UID_RANGE: uidRange({ first: 200_000, last: 299_999 }),
  FLEET_SANDBOX_PIDS: integer(512, 16, 1_000_000),
  FLEET_SANDBOX_FILE_BYTES: integer(4 * 1024 ** 3, 1_024 * 1_024, Number.MAX_SAFE_INTEGER, ' of bytes'),
  FLEET_SANDBOX_OPEN_FILES: integer(4_096, 64, 1_048_576),
  FLEET_SANDBOX_CPU_SECONDS: integer(3_600, 0, 31 * 24 * 3_600, ' of seconds'),
  FLEET_SANDBOX_MEMORY_MB: integer(4_096, 16, 16 * 1024 * 1024),
  FLEET_SANDBOX_CPU_WEIGHT: integer(100, 1, 10_000),
  FLEET_SANDBOX_TMP_MB: integer(256, 1, 1024 * 1024),
  FLEET_SANDBOX_CGROUP_ROOT: anyText('/sys/fs/cgroup'),
  FLEET_SHRINK_GUARD_PCT: integer(50, 0, 100),
  FLEET_ARCHIVE_FORMAT: oneOf(['1', '2'] as const, '2'),
  FLEET_TREE_MAX_DEPTH: integer(DEFAULT_TREE_LIMITS.maxDepth, 8, 4_096),
  FLEET_TREE_MAX_ENTRIES: integer(DEFAULT_TREE_LIMITS.maxEntries, 1_000, 100_000_000),
  FLEET_TREE_MAX_FILE_BYTES: integer(DEFAULT_TREE_LIMITS.maxFileBytes, 1_024, Number.MAX_SAFE_INTEGER, ' of bytes'),
  FLEET_KEEP_REVISIONS: integer(20, 1, 100_000),
  FLEET_KEEP_REVISIONS_MIN_AGE_MS: durationMs(DAY, 0),
  FLEET_UNATTACHED_GRACE_MS: durationMs(HOUR, 0),
  FLEET_OBJECT_GRACE_MS: field<number | null>(`a whole number of milliseconds between 1 and ${365 * DAY}`, (raw) => (/^\d+$/.test(raw) && Number(raw) >= 1 && Number(raw) <= 365 * DAY ? Number(raw) : undefined), null),
  FLEET_VERIFY_READ_DATA_PCT: field('a percentage above 0 and at most 100 (e.g. 1 or 0.5)', (raw) => (/^\d+(\.\d+)?%?$/.test(raw) && parseFloat(raw) > 0 && parseFloat(raw) <= 100 ? parseFloat(raw) : undefined), 1),
  FLEET_BASE_RETENTION_MS: durationMs(14 * DAY, 0, 3650 * DAY),
  FLEET_GC_SCHEDULE: gcSchedule(),
  FLEET_API_TOKENS: list(/^\S{16,}$/, 'tokens of at least 16 non-space characters', []),
  FLEET_ADMIN_PASSWORD: anyText(null),
  FLEET_ADMIN_READONLY: flag(false),
  FLEET_VERCEL_TOKEN: anyText(null),
  FLEET_VERCEL_TEAM_ID: anyText(null),
  FLEET_VERCEL_PROJECT_ID: anyText(null),
  FLEET_VERCEL_PERSISTENT: flag(true),
  FLEET_VERCEL_SANDBOX_TIMEOUT_MS: durationMs(45 * 60_000, 60_000, DAY),
  FLEET_VERCEL_API_URL: matching(/^https?:\/\/\S+$/, 'an http:// or https:// URL', null),
  VERCEL_OIDC_TOKEN: anyText(null),
});

/** The names of every variable the fleet reads. */
export const CONFIG_VARIABLES = Object.freeze(Object.keys(EnvSchema.shape)) as readonly (keyof typeof EnvSchema.shape)[];

type Env = z.output<typeof EnvSchema>;

/** The compiled configuration. All paths are absolute; all durations are milliseconds. */
export interface Config {
  readonly redis: {
    /** `null` means embedded mode: `fleet up` runs a private redis-server. */
    readonly url: string | null;
    /** Hash-tagged prefix shared by every queue and key (Redis Cluster-safe). @default "{fleet}" */
    readonly prefix: string;
    readonly commandTimeoutMs: number;
  };
  readonly provider: 'local' | 'vercel';
  readonly hostId: string;
  /** Local sandboxes this host is sized for (placement balances load / capacity). @default 100 */
  readonly hostCapacity: number;
  readonly paths: {
    readonly home: string;
    readonly liveRoot: string;
    readonly archiveRoot: string;
    readonly snapshotRoot: string;
    readonly legacyRoot: string;
    /** Host-side mirrors of Vercel sandbox trees, one per workspace (what a Vercel persist walks). @default $FLEET_HOME/vercel-mirrors */
    readonly vercelMirrorRoot: string;
  };
  readonly checkpointIntervalMs: number;
  readonly idleTtlMs: number;
  /** Longest a turn stays open without being opened again or closed (a crashed app's turn expires). @default 3600000 */
  readonly turnTtlMs: number;
  readonly shutdown: { readonly graceMs: number; readonly flushMs: number };
  readonly http: {
    readonly host: string;
    readonly port: number;
    readonly apiTokens: readonly string[];
    /** Longest `?wait=true` of the HTTP API; longer requested waits are cut to it. @default 60000 */
    readonly waitCapMs: number;
    /** Largest accepted request body (413 above). @default 2097152 */
    readonly bodyLimitBytes: number;
  };
  readonly admin: { readonly password: string | null; readonly readOnly: boolean };
  readonly logLevel: Env['FLEET_LOG_LEVEL'];
  readonly worker: {
    /** Jobs at once per queue per process; `null` = each queue's own default (see queues/index.ts). */
    readonly concurrency: number | null;
    readonly lockDurationMs: number;
    readonly stalledIntervalMs: number;
    readonly maxStalledCount: number;
    readonly heartbeatIntervalMs: number;
    /** TTL of single-flight locks (extended while held). */
    readonly lockTtlMs: number;
  };
  readonly deadlines: {
    readonly provisionMs: number;
    readonly persistMs: number;
    readonly bakeMs: number;
    readonly backfillMs: number;
    readonly gcMs: number;
    readonly execMs: number;
  };
  readonly exec: {
    readonly envAllowlist: readonly string[];
    /** Values of the allowlisted variables taken from the fleet's environment at start-up. */
    readonly env: Readonly<Record<string, string>>;
  };
  /** How the local provider contains the commands it runs (see src/sandbox/). */
  readonly sandbox: {
    /**
     * `namespaces`: every command under bubblewrap as the workspace's own uid; `none`: as the
     * fleet's user with the host in view (development only); `auto`: namespaces when the
     * start-up probe passes, else none with a warning. @default "auto"
     */
    readonly isolation: 'auto' | 'namespaces' | 'none';
    /** `none`: a network namespace with only its own loopback; `host`: the host's network. @default "none" */
    readonly network: 'none' | 'host';
    /** Uids handed out, one per workspace, never shared. @default 200000-299999 */
    readonly uidRange: UidRange;
    readonly limits: SandboxLimitsConfig;
    /** cgroup v2 mount where per-command cgroups are made when it is delegable. @default "/sys/fs/cgroup" */
    readonly cgroupRoot: string;
  };
  /** PATH used to find system tools (rsync, tar, redis-server). */
  readonly systemPath: string;
  /**
   * Variables a base manifest's `envAllowlist` may copy into setup commands: the process
   * environment minus the fleet's own settings and anything that looks like a secret.
   */
  readonly bakeEnvSource: Readonly<Record<string, string>>;
  /** What one persist takes from a live tree (entries over a limit are refused; the rest is archived). */
  readonly treeLimits: TreeLimits;
  /** The format new revisions are written in (docs/archive-format.md); both are always read. @default 1 */
  readonly archiveFormat: 1 | 2;
  readonly retention: {
    readonly shrinkGuardPct: number;
    readonly keepRevisions: number;
    readonly keepRevisionsMinAgeMs: number;
    readonly unattachedGraceMs: number;
    /**
     * Age an unreachable object or tree of the store must reach before the objects GC deletes it;
     * longer than twice the longest persist or backfill deadline (checked at start-up), so no
     * writer still running can need it. @default 3 × the longer of the two deadlines
     */
    readonly objectGraceMs: number;
    readonly baseRetentionMs: number;
    /** Interval of each GC kind's job scheduler (0 = off). */
    readonly gcSchedule: GcScheduleMap;
  };
  readonly verify: {
    /** Percentage of the object id space the scheduled `verify` GC kind re-reads per run (rotating). @default 1 */
    readonly readDataPct: number;
  };
  readonly vercel: {
    readonly token: string | null;
    readonly teamId: string | null;
    readonly projectId: string | null;
    readonly apiUrl: string | null;
    readonly oidcToken: string | null;
    /** Create persistent sandboxes (stop snapshots the filesystem; resume restores it). @default true */
    readonly persistent: boolean;
    /** Session lifetime sent at create. @default 2700000 (45 min) */
    readonly sandboxTimeoutMs: number;
  };
}

/** Limits of one sandboxed command: rlimits always, cgroup v2 limits where the tree is delegable. */
export interface SandboxLimitsConfig {
  /** Processes of the workspace's uid (RLIMIT_NPROC; cgroup pids.max). @default 512 */
  readonly pids: number;
  /** Largest file a command may write (RLIMIT_FSIZE). @default 4 GiB */
  readonly fileBytes: number;
  /** Open files per process (RLIMIT_NOFILE). @default 4096 */
  readonly openFiles: number;
  /** CPU seconds per process (RLIMIT_CPU; 0 = unlimited). @default 3600 */
  readonly cpuSeconds: number;
  /** Memory of one command's processes (cgroup memory.max; not enforced without cgroups). @default 4096 */
  readonly memoryMb: number;
  /** Relative CPU share (cgroup cpu.weight). @default 100 */
  readonly cpuWeight: number;
  /** Size of the private /tmp (a tmpfs, so it counts as memory). @default 256 */
  readonly tmpMb: number;
}

// Refuses a production Redis without a password while sandboxes are isolated (see README).
function checkRedisPassword(url: string | null, isolation: Env['FLEET_LOCAL_ISOLATION']): void {
  if (url === null || isolation === 'none') return;
  let password = '';
  try {
    password = new URL(url).password;
  } catch {
    password = '';
  }
  if (password === '') {
    throw new ConfigError(
      'REDIS_URL',
      'a URL with a password (redis://:<password>@host:port): sandboxes must not be able to use the fleet\'s Redis (FLEET_LOCAL_ISOLATION=none exempts it)',
      url,
    );
  }
}

// Host networking puts the loopback HTTP API in every sandbox's reach: it must not be open.
function checkSandboxNetwork(network: Env['FLEET_SANDBOX_NETWORK'], isolation: Env['FLEET_LOCAL_ISOLATION'], tokens: readonly string[]): void {
  if (network === 'host' && isolation !== 'none' && tokens.length === 0) {
    throw new ConfigError('FLEET_SANDBOX_NETWORK', 'none unless FLEET_API_TOKENS is set: with host networking a sandbox reaches the loopback HTTP API, open without tokens', network);
  }
}

// The objects GC's grace: given, or 3 × the longest writer deadline; never within twice that deadline.
function objectGraceMs(e: Env): number {
  const longest = Math.max(e.FLEET_PERSIST_DEADLINE_MS, e.FLEET_BACKFILL_DEADLINE_MS);
  const grace = e.FLEET_OBJECT_GRACE_MS ?? 3 * longest;
  if (grace <= 2 * longest) {
    throw new ConfigError('FLEET_OBJECT_GRACE_MS', `more than twice the longest persist or backfill deadline (${2 * longest} ms): an object a writer still running needs must never be old enough to collect`, String(e.FLEET_OBJECT_GRACE_MS));
  }
  return grace;
}

// Recursively freezes a plain object graph.
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/**
 * Parses the environment once. Throws `ConfigError` naming the first bad variable.
 * @param env defaults to `process.env`; tests pass their own object.
 * @param cwd directory that relative paths are resolved against.
 */
export function loadConfig(env: Readonly<Record<string, string | undefined>> = process.env, cwd = process.cwd()): Config {
  const raw: Record<string, string | undefined> = {};
  for (const name of CONFIG_VARIABLES) raw[name] = env[name];
  const parsed = EnvSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const variable = String(issue.path[0]);
    throw new ConfigError(variable, issue.message, raw[variable]);
  }
  const e = parsed.data;
  checkRedisPassword(e.REDIS_URL, e.FLEET_LOCAL_ISOLATION);
  checkSandboxNetwork(e.FLEET_SANDBOX_NETWORK, e.FLEET_LOCAL_ISOLATION, e.FLEET_API_TOKENS);
  const home = path.resolve(cwd, e.FLEET_HOME!);
  const under = (value: string | null, fallback: string) => path.resolve(cwd, value ?? path.join(home, fallback));
  const httpHost = e.FLEET_HTTP_HOST ?? (e.FLEET_API_TOKENS.length > 0 ? '0.0.0.0' : '127.0.0.1');
  return deepFreeze<Config>({
    redis: { url: e.REDIS_URL, prefix: e.FLEET_PREFIX!, commandTimeoutMs: e.FLEET_REDIS_COMMAND_TIMEOUT_MS },
    provider: e.FLEET_PROVIDER,
    hostId: e.FLEET_HOST_ID!,
    hostCapacity: e.FLEET_HOST_CAPACITY,
    paths: {
      home,
      liveRoot: under(e.FLEET_LIVE_ROOT, 'live'),
      archiveRoot: under(e.FLEET_ARCHIVE_ROOT, 'archive'),
      snapshotRoot: under(e.FLEET_SNAPSHOT_ROOT, 'snapshots'),
      legacyRoot: under(e.FLEET_LEGACY_ROOT, 'legacy'),
      vercelMirrorRoot: under(e.FLEET_VERCEL_MIRROR_ROOT, 'vercel-mirrors'),
    },
    checkpointIntervalMs: e.FLEET_CHECKPOINT_INTERVAL_MS,
    idleTtlMs: e.FLEET_IDLE_TTL_MS,
    turnTtlMs: e.FLEET_TURN_TTL_MS,
    shutdown: { graceMs: e.FLEET_SHUTDOWN_GRACE_MS, flushMs: e.FLEET_SHUTDOWN_FLUSH_MS },
    http: { host: httpHost, port: e.FLEET_HTTP_PORT, apiTokens: e.FLEET_API_TOKENS, waitCapMs: e.FLEET_HTTP_WAIT_CAP_MS, bodyLimitBytes: e.FLEET_HTTP_BODY_LIMIT_BYTES },
    admin: { password: e.FLEET_ADMIN_PASSWORD, readOnly: e.FLEET_ADMIN_READONLY },
    logLevel: e.FLEET_LOG_LEVEL,
    worker: {
      concurrency: e.FLEET_CONCURRENCY,
      lockDurationMs: e.FLEET_LOCK_DURATION_MS,
      stalledIntervalMs: e.FLEET_STALLED_INTERVAL_MS,
      maxStalledCount: e.FLEET_MAX_STALLED_COUNT,
      heartbeatIntervalMs: e.FLEET_HEARTBEAT_INTERVAL_MS,
      lockTtlMs: e.FLEET_LOCK_TTL_MS,
    },
    deadlines: {
      provisionMs: e.FLEET_PROVISION_DEADLINE_MS,
      persistMs: e.FLEET_PERSIST_DEADLINE_MS,
      bakeMs: e.FLEET_BAKE_DEADLINE_MS,
      backfillMs: e.FLEET_BACKFILL_DEADLINE_MS,
      gcMs: e.FLEET_GC_DEADLINE_MS,
      execMs: e.FLEET_EXEC_DEADLINE_MS,
    },
    exec: {
      envAllowlist: e.FLEET_EXEC_ENV_ALLOWLIST,
      env: Object.fromEntries(e.FLEET_EXEC_ENV_ALLOWLIST.flatMap((name) => (env[name] === undefined ? [] : [[name, env[name]!]]))),
    },
    sandbox: {
      isolation: e.FLEET_LOCAL_ISOLATION,
      network: e.FLEET_SANDBOX_NETWORK,
      uidRange: e.FLEET_SANDBOX_UID_RANGE,
      limits: {
        pids: e.FLEET_SANDBOX_PIDS,
        fileBytes: e.FLEET_SANDBOX_FILE_BYTES,
        openFiles: e.FLEET_SANDBOX_OPEN_FILES,
        cpuSeconds: e.FLEET_SANDBOX_CPU_SECONDS,
        memoryMb: e.FLEET_SANDBOX_MEMORY_MB,
        cpuWeight: e.FLEET_SANDBOX_CPU_WEIGHT,
        tmpMb: e.FLEET_SANDBOX_TMP_MB,
      },
      cgroupRoot: path.resolve(cwd, e.FLEET_SANDBOX_CGROUP_ROOT!),
    },
    systemPath: env.PATH ?? '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    bakeEnvSource: Object.fromEntries(
      Object.entries(env).filter(
        (entry): entry is [string, string] =>
          entry[1] !== undefined && !/^(FLEET_|REDIS_|VERCEL_)/.test(entry[0]) && !/(TOKEN|SECRET|PASSWORD|PASSWD|KEY|CREDENTIAL|PRIVATE|AUTH)/i.test(entry[0]),
      ),
    ),
    archiveFormat: e.FLEET_ARCHIVE_FORMAT === '1' ? 1 : 2,
    treeLimits: {
      ...DEFAULT_TREE_LIMITS,
      maxDepth: e.FLEET_TREE_MAX_DEPTH,
      maxEntries: e.FLEET_TREE_MAX_ENTRIES,
      maxFileBytes: e.FLEET_TREE_MAX_FILE_BYTES,
    },
    retention: {
      shrinkGuardPct: e.FLEET_SHRINK_GUARD_PCT,
      keepRevisions: e.FLEET_KEEP_REVISIONS,
      keepRevisionsMinAgeMs: e.FLEET_KEEP_REVISIONS_MIN_AGE_MS,
      unattachedGraceMs: e.FLEET_UNATTACHED_GRACE_MS,
      objectGraceMs: objectGraceMs(e),
      baseRetentionMs: e.FLEET_BASE_RETENTION_MS,
      gcSchedule: e.FLEET_GC_SCHEDULE,
    },
    verify: { readDataPct: e.FLEET_VERIFY_READ_DATA_PCT },
    vercel: {
      token: e.FLEET_VERCEL_TOKEN,
      teamId: e.FLEET_VERCEL_TEAM_ID,
      projectId: e.FLEET_VERCEL_PROJECT_ID,
      apiUrl: e.FLEET_VERCEL_API_URL,
      oidcToken: e.VERCEL_OIDC_TOKEN,
      persistent: e.FLEET_VERCEL_PERSISTENT,
      sandboxTimeoutMs: e.FLEET_VERCEL_SANDBOX_TIMEOUT_MS,
    },
  });
}

/** Documentation rows for the README table: variable, default, meaning. */
export const CONFIG_DOCS: Readonly<Record<(typeof CONFIG_VARIABLES)[number], readonly [string, string]>> = Object.freeze({
  REDIS_URL: ['(unset: embedded)', 'Redis to use; unset makes `fleet up` run a private redis-server under `.fleet/redis`'],
  FLEET_PREFIX: ['{fleet}', 'Hash-tagged prefix of every queue and key (Redis Cluster-safe)'],
  FLEET_PROVIDER: ['local', 'Sandbox provider for new workspaces: `local` or `vercel`'],
  FLEET_HOST_CAPACITY: ['100', 'Local sandboxes this host is sized for; new ones go to the least-loaded live host'],
  FLEET_HOST_ID: ['local', 'This host id; host-bound queues are `<queue>@<hostId>`'],
  FLEET_HOME: ['.fleet', 'State directory (embedded Redis, default roots)'],
  FLEET_LIVE_ROOT: ['$FLEET_HOME/live', 'Live workspace trees of the local provider'],
  FLEET_ARCHIVE_ROOT: ['$FLEET_HOME/archive', 'Archive of immutable revisions (may be shared, e.g. NFS)'],
  FLEET_SNAPSHOT_ROOT: ['$FLEET_HOME/snapshots', 'Base snapshots of the local provider'],
  FLEET_LEGACY_ROOT: ['$FLEET_HOME/legacy', 'Legacy flat blob store read by backfill'],
  FLEET_VERCEL_MIRROR_ROOT: ['$FLEET_HOME/vercel-mirrors', 'Host-side mirrors of Vercel sandbox trees (a persist transfers only what changed into them)'],
  FLEET_CHECKPOINT_INTERVAL_MS: ['30000', 'Checkpoint interval per active workspace'],
  FLEET_IDLE_TTL_MS: ['900000', 'Quiet time (no turn open, no exec or file operation running, no activity) after which a workspace is flushed and stopped'],
  FLEET_TURN_TTL_MS: ['3600000', 'Longest a turn stays open without being opened again or closed'],
  FLEET_SHUTDOWN_GRACE_MS: ['25000', 'How long a stopping worker lets active jobs finish'],
  FLEET_SHUTDOWN_FLUSH_MS: ['10000', 'Time box of the shutdown flush of held workspaces (0 = no flush)'],
  FLEET_HTTP_HOST: ['127.0.0.1 (0.0.0.0 with tokens)', 'Address of the HTTP API'],
  FLEET_HTTP_PORT: ['7400', 'Port of the HTTP API, Bull Board and /metrics (0 = any free port)'],
  FLEET_HTTP_WAIT_CAP_MS: ['60000', 'Longest wait of `?wait=true` on the HTTP API (a request asking longer is cut to it; 504 after)'],
  FLEET_HTTP_BODY_LIMIT_BYTES: ['2097152', 'Largest request body the HTTP API accepts (413 above)'],
  FLEET_LOG_LEVEL: ['info', 'pino log level'],
  FLEET_CONCURRENCY: ['(per queue: provision 16, persist 4, checkpoint 8, backfill 2, gc 2, bake 1)', 'Jobs run at once per queue per worker process (overrides every queue)'],
  FLEET_LOCK_DURATION_MS: ['30000', 'BullMQ job lock duration'],
  FLEET_STALLED_INTERVAL_MS: ['30000', 'BullMQ stalled-job check interval'],
  FLEET_MAX_STALLED_COUNT: ['3', 'Stalls (crashed workers) a job survives before it fails'],
  FLEET_REDIS_COMMAND_TIMEOUT_MS: ['5000', 'Command timeout of non-worker Redis connections'],
  FLEET_HEARTBEAT_INTERVAL_MS: ['5000', 'Worker/host heartbeat interval'],
  FLEET_LOCK_TTL_MS: ['10000', 'TTL of single-flight (Redlock) locks, extended while held'],
  FLEET_PROVISION_DEADLINE_MS: ['300000', 'Deadline of one provision job'],
  FLEET_PERSIST_DEADLINE_MS: ['600000', 'Deadline of one persist/checkpoint job'],
  FLEET_BAKE_DEADLINE_MS: ['1800000', 'Deadline of one bake job'],
  FLEET_BACKFILL_DEADLINE_MS: ['1800000', 'Deadline of one backfill job'],
  FLEET_GC_DEADLINE_MS: ['600000', 'Deadline of one gc job'],
  FLEET_EXEC_DEADLINE_MS: ['60000', 'Default deadline of `fleet exec`'],
  FLEET_EXEC_ENV_ALLOWLIST: ['PATH,HOME,LANG,LC_ALL,TERM,TZ', 'Environment passed to commands run in a workspace'],
  FLEET_LOCAL_ISOLATION: ['auto', 'How local sandboxes are contained: `namespaces` (bubblewrap, a uid per workspace), `none` (the fleet user, whole host in view: development only), `auto` (namespaces when the start-up probe passes, else none with a warning)'],
  FLEET_SANDBOX_NETWORK: ['none', 'Network of a namespaced sandbox: `none` (its own loopback only) or `host` (needs `FLEET_API_TOKENS`)'],
  FLEET_SANDBOX_UID_RANGE: ['200000-299999', 'Uids given to workspaces, one each, never shared or reused'],
  FLEET_SANDBOX_PIDS: ['512', 'Processes of one workspace (RLIMIT_NPROC of its uid; cgroup pids.max where delegable)'],
  FLEET_SANDBOX_FILE_BYTES: ['4294967296', 'Largest file a sandboxed command may write (RLIMIT_FSIZE)'],
  FLEET_SANDBOX_OPEN_FILES: ['4096', 'Open files per sandboxed process (RLIMIT_NOFILE)'],
  FLEET_SANDBOX_CPU_SECONDS: ['3600', 'CPU seconds per sandboxed process (RLIMIT_CPU; 0 = unlimited)'],
  FLEET_SANDBOX_MEMORY_MB: ['4096', 'Memory of one sandboxed command (cgroup memory.max; only where the cgroup v2 tree is delegable)'],
  FLEET_SANDBOX_CPU_WEIGHT: ['100', 'CPU weight of one sandboxed command (cgroup cpu.weight; only where delegable)'],
  FLEET_SANDBOX_TMP_MB: ['256', 'Size of the private /tmp of a sandboxed command (tmpfs)'],
  FLEET_SANDBOX_CGROUP_ROOT: ['/sys/fs/cgroup', 'cgroup v2 mount under which per-command cgroups are made when it is delegable'],
  FLEET_SHRINK_GUARD_PCT: ['50', 'A reconcile removing more than this % of files is refused without force'],
  FLEET_ARCHIVE_FORMAT: ['2', 'Format of new revisions: `2` content-addressed objects and trees (docs/archive-format.md), `1` hard-linked trees (the default before format 2); both are read'],
  FLEET_TREE_MAX_DEPTH: ['1024', 'Deepest directory level a persist walks; deeper entries are refused (the rest is archived)'],
  FLEET_TREE_MAX_ENTRIES: ['1000000', 'Most entries a persist takes from one live tree; the rest are refused'],
  FLEET_TREE_MAX_FILE_BYTES: ['17179869184', 'Largest file a persist copies (16 GiB); larger files are refused and keep their archived version'],
  FLEET_KEEP_REVISIONS: ['20', 'Attached revisions kept per workspace (plus younger ones)'],
  FLEET_KEEP_REVISIONS_MIN_AGE_MS: ['86400000', 'Revisions younger than this are always kept'],
  FLEET_UNATTACHED_GRACE_MS: ['3600000', 'Age after which unattached revisions are collectable'],
  FLEET_OBJECT_GRACE_MS: ['(3 × the longer of the persist and backfill deadlines)', 'Age an unreachable object or tree (and a `.store/tmp` temporary) must reach before GC deletes it; must exceed twice the longer deadline'],
  FLEET_VERIFY_READ_DATA_PCT: ['1', 'Percentage of the object id space the scheduled `verify` GC kind re-reads per run, rotating through all of it across runs'],
  FLEET_BASE_RETENTION_MS: ['1209600000', 'Minimum age before an unreferenced base snapshot may be retired'],
  FLEET_GC_SCHEDULE: ['unattached=3600000,retention=3600000,litter=3600000,bases=86400000,orphans=600000,idle=60000,objects=3600000,verify=86400000', 'GC schedule per kind (ms between runs, or off)'],
  FLEET_API_TOKENS: ['(none: loopback only)', 'Comma-separated bearer tokens of the HTTP API'],
  FLEET_ADMIN_PASSWORD: ['(none: board disabled)', 'Password of Bull Board at /admin/queues (user `admin`)'],
  FLEET_ADMIN_READONLY: ['false', 'Make Bull Board read-only'],
  FLEET_VERCEL_TOKEN: ['(none)', 'Vercel access token'],
  FLEET_VERCEL_TEAM_ID: ['(none)', 'Vercel team id'],
  FLEET_VERCEL_PROJECT_ID: ['(none)', 'Vercel project id'],
  FLEET_VERCEL_PERSISTENT: ['true', 'Create persistent Vercel sandboxes'],
  FLEET_VERCEL_SANDBOX_TIMEOUT_MS: ['2700000', 'Vercel session lifetime'],
  FLEET_VERCEL_API_URL: ['(Vercel default)', 'Override of the Vercel API base URL (proxies, tests)'],
  VERCEL_OIDC_TOKEN: ['(none)', 'OIDC token used when no access token is configured'],
});

/** A copy of `config` pointing at a resolved Redis URL (embedded mode). */
export function withRedisUrl(config: Config, url: string): Config {
  return deepFreeze<Config>({ ...config, redis: { ...config.redis, url } });
}
