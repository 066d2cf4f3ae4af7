import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES, loadConfig } from '../../src/config.js';
import { CONFIG_RECORDS } from '../../src/config/env-schema.js';
import { ConfigError } from '../../src/errors/config-error.js';

// One bad value per variable that validates its input.
const BAD_VALUES: Record<string, string> = {
  REDIS_URL: 'http://localhost:6379',
  FLEET_REDIS_CLUSTER_NODES: 'redis-a,redis-b:7000',
  FLEET_PREFIX: 'fleet',
  FLEET_REDIS_KEY_LAYOUT: 'by-workspace',
  FLEET_PROVIDER: 'docker',
  FLEET_PUBLIC_URL: 'https://fleet.example.com/board',
  FLEET_OTEL_ENDPOINT: 'collector:4318',
  FLEET_OTEL_SERVICE_NAME: 'sandbox fleet',
  FLEET_HOST_ID: 'host one',
  FLEET_HOST_CAPACITY: '0',
  FLEET_CHECKPOINT_INTERVAL_MS: '30s',
  FLEET_IDLE_TTL_MS: '-1',
  FLEET_TURN_TTL_MS: '500',
  FLEET_SHUTDOWN_GRACE_MS: '0',
  FLEET_SHUTDOWN_FLUSH_MS: 'soon',
  FLEET_HTTP_PORT: '70000',
  FLEET_HTTP_WAIT_CAP_MS: '50',
  FLEET_HTTP_BODY_LIMIT_BYTES: '2MB',
  FLEET_FILE_MAX_BYTES: '0',
  FLEET_WORKSPACE_QUOTA_BYTES: '-1',
  FLEET_WORKSPACE_QUOTA_FILES: 'many',
  FLEET_LOG_LEVEL: 'loud',
  FLEET_LOG_FORMAT: 'yaml',
  FLEET_CONCURRENCY: '0',
  FLEET_LOCK_DURATION_MS: '1.5',
  FLEET_STALLED_INTERVAL_MS: 'x',
  FLEET_MAX_STALLED_COUNT: '-3',
  FLEET_REDIS_COMMAND_TIMEOUT_MS: '1',
  FLEET_HEARTBEAT_INTERVAL_MS: '1e3',
  FLEET_LOCK_TTL_MS: '10',
  FLEET_PROVISION_DEADLINE_MS: 'forever',
  FLEET_PERSIST_DEADLINE_MS: '0x10',
  FLEET_BAKE_DEADLINE_MS: '5',
  FLEET_BACKFILL_DEADLINE_MS: '99999999999999',
  FLEET_GC_DEADLINE_MS: 'NaN',
  FLEET_EXEC_DEADLINE_MS: '10 000',
  FLEET_EXEC_ENV_ALLOWLIST: 'PATH,1BAD',
  FLEET_SHRINK_GUARD_PCT: '101',
  FLEET_ARCHIVE_FORMAT: '3',
  FLEET_TREE_MAX_DEPTH: '3',
  FLEET_TREE_MAX_ENTRIES: 'many',
  FLEET_TREE_MAX_FILE_BYTES: '-1',
  FLEET_KEEP_REVISIONS: '0',
  FLEET_KEEP_REVISIONS_MIN_AGE_MS: 'a day',
  FLEET_UNATTACHED_GRACE_MS: 'later',
  FLEET_OBJECT_GRACE_MS: '90 minutes',
  FLEET_VERIFY_READ_DATA_PCT: '0',
  FLEET_BASE_RETENTION_MS: '14d',
  FLEET_BASE_OVERLAY_MAX_BYTES: '1 MiB',
  FLEET_API_TOKENS: 'short',
  FLEET_ADMIN_PASSWORD: 'x',
  FLEET_GC_SCHEDULE: 'idle=5',
  FLEET_ADMIN_READONLY: 'maybe',
  FLEET_VERCEL_API_URL: 'ftp://example.com',
  FLEET_VERCEL_PERSISTENT: 'sometimes',
  FLEET_PERSIST_CHANGE_SCAN: 'perhaps',
  FLEET_ARCHIVE_TREE_PATCHES: 'sometimes',
  FLEET_ARCHIVE_PACKS: 'perhaps',
  FLEET_RESTORE_TAR: 'maybe',
  FLEET_VERCEL_SANDBOX_TIMEOUT_MS: '5',
  FLEET_LOCAL_ISOLATION: 'chroot',
  FLEET_SANDBOX_NETWORK: 'bridge',
  FLEET_SANDBOX_UID_RANGE: '1000-2000',
  FLEET_SANDBOX_PIDS: '2',
  FLEET_SANDBOX_FILE_BYTES: '1G',
  FLEET_SANDBOX_OPEN_FILES: '3',
  FLEET_SANDBOX_CPU_SECONDS: '-1',
  FLEET_SANDBOX_MEMORY_MB: '1',
  FLEET_SANDBOX_CPU_WEIGHT: '0',
  FLEET_SANDBOX_TMP_MB: '0',
};

describe('loadConfig', () => {
  it('applies every default with no environment', () => {
    const config = loadConfig({}, '/srv/app');
    expect(config.redis).toEqual({ url: null, clusterNodes: null, clusterPassword: null, prefix: '{fleet}', keyLayout: 'single-slot', commandTimeoutMs: 5_000 });
    expect(config.checkpointIntervalMs).toBe(30_000);
    expect(config.paths.home).toBe('/srv/app/.fleet');
    expect(config.paths.archiveRoot).toBe('/srv/app/.fleet/archive');
    expect(config.http.host).toBe('127.0.0.1');
    expect(config.retention.shrinkGuardPct).toBe(50);
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.paths)).toBe(true);
  });

  it('parses durations in milliseconds and lists', () => {
    const config = loadConfig({ FLEET_CHECKPOINT_INTERVAL_MS: '5000', FLEET_API_TOKENS: 'aaaaaaaaaaaaaaaa, bbbbbbbbbbbbbbbb', REDIS_URL: 'redis://:pw@h:1/2' }, '/x');
    expect(config.checkpointIntervalMs).toBe(5_000);
    expect(config.http.apiTokens).toEqual(['aaaaaaaaaaaaaaaa', 'bbbbbbbbbbbbbbbb']);
    expect(config.http.host).toBe('0.0.0.0');
    expect(config.redis.url).toBe('redis://:pw@h:1/2');
  });

  it('compiles the sandbox settings: isolation auto, no network, a uid range, rlimits', () => {
    const config = loadConfig({ FLEET_SANDBOX_UID_RANGE: '300000-300009', FLEET_SANDBOX_PIDS: '64' }, '/x');
    expect(config.sandbox.isolation).toBe('auto');
    expect(config.sandbox.network).toBe('none');
    expect(config.sandbox.uidRange).toEqual({ first: 300_000, last: 300_009 });
    expect(config.sandbox.limits.pids).toBe(64);
    expect(config.sandbox.cgroupRoot).toBe('/sys/fs/cgroup');
    expect(() => loadConfig({ FLEET_SANDBOX_UID_RANGE: '300010-300000' })).toThrow(/FLEET_SANDBOX_UID_RANGE/);
    // 65534 (nobody) and every system uid lie below the smallest accepted uid.
    expect(() => loadConfig({ FLEET_SANDBOX_UID_RANGE: '60000-70000' })).toThrow(/FLEET_SANDBOX_UID_RANGE/);
  });

  it('refuses a REDIS_URL without a password unless isolation is none, naming REDIS_URL', () => {
    for (const url of ['redis://h:6379', 'redis://user@h:6379', 'redis://:@h:6379']) {
      let caught: unknown;
      try {
        loadConfig({ REDIS_URL: url });
      } catch (error) {
        caught = error;
      }
      expect(caught, url).toBeInstanceOf(ConfigError);
      expect((caught as ConfigError).variable).toBe('REDIS_URL');
      expect((caught as ConfigError).message).toMatch(/^REDIS_URL: expected a URL with a password/);
    }
    expect(loadConfig({ REDIS_URL: 'redis://h:6379', FLEET_LOCAL_ISOLATION: 'none' }).redis.url).toBe('redis://h:6379');
    expect(loadConfig({ REDIS_URL: 'rediss://default:s3cret@h:6380' }).redis.url).toBe('rediss://default:s3cret@h:6380');
  });

  it('refuses host networking for sandboxes while the HTTP API is open (no tokens)', () => {
    expect(() => loadConfig({ FLEET_SANDBOX_NETWORK: 'host' })).toThrow(/^FLEET_SANDBOX_NETWORK: expected none unless FLEET_API_TOKENS is set/);
    expect(loadConfig({ FLEET_SANDBOX_NETWORK: 'host', FLEET_API_TOKENS: 'aaaaaaaaaaaaaaaa' }).sandbox.network).toBe('host');
    expect(loadConfig({ FLEET_SANDBOX_NETWORK: 'host', FLEET_LOCAL_ISOLATION: 'none' }).sandbox.network).toBe('host');
  });

  it('keeps the objects grace longer than twice the longest persist or backfill deadline; GC schedules objects hourly and verify daily', () => {
    const defaults = loadConfig({}, '/x');
    expect(defaults.retention.objectGraceMs).toBe(3 * 30 * 60_000);
    expect(defaults.retention.gcSchedule).toMatchObject({ objects: 3_600_000, verify: 86_400_000 });
    expect(defaults.verify.readDataPct).toBe(1);
    expect(loadConfig({ FLEET_PERSIST_DEADLINE_MS: '3600000', FLEET_BACKFILL_DEADLINE_MS: '60000' }, '/x').retention.objectGraceMs).toBe(3 * 3_600_000);
    expect(loadConfig({ FLEET_OBJECT_GRACE_MS: '3600001', FLEET_PERSIST_DEADLINE_MS: '60000', FLEET_BACKFILL_DEADLINE_MS: '1800000' }, '/x').retention.objectGraceMs).toBe(3_600_001);
    expect(() => loadConfig({ FLEET_OBJECT_GRACE_MS: '3600000', FLEET_BACKFILL_DEADLINE_MS: '1800000' })).toThrow(/^FLEET_OBJECT_GRACE_MS: expected more than twice the longest persist or backfill deadline \(3600000 ms\)/);
    expect(loadConfig({ FLEET_VERIFY_READ_DATA_PCT: '0.5' }, '/x').verify.readDataPct).toBe(0.5);
    expect(loadConfig({ FLEET_GC_SCHEDULE: 'objects=off,verify=600000' }, '/x').retention.gcSchedule).toMatchObject({ objects: 0, verify: 600_000 });
  });

  it('never shows a secret variable\'s value in an error: tokens and passwords by length, a URL with its credentials masked', () => {
    const refusal = (env: Record<string, string>): ConfigError => {
      try {
        loadConfig(env);
      } catch (error) {
        if (error instanceof ConfigError) return error;
        throw error;
      }
      throw new Error(`accepted ${JSON.stringify(Object.keys(env))}`);
    };
    const shown = (error: ConfigError) => error.message + JSON.stringify(error.context);
    const tokens = refusal({ FLEET_API_TOKENS: 'aaaaaaaaaaaaaaaa,hunter2 short' });
    expect(tokens.variable).toBe('FLEET_API_TOKENS');
    expect(shown(tokens)).not.toContain('hunter2');
    expect(shown(tokens)).not.toContain('aaaaaaaaaaaaaaaa');
    expect(tokens.message).toMatch(/got "\(redacted, 30 characters\)"$/);
    const password = refusal({ FLEET_ADMIN_PASSWORD: 'swordfish' });
    expect(password.message).toBe('FLEET_ADMIN_PASSWORD: expected a password of at least 12 characters (unset disables the board), got "(redacted, 9 characters)"');
    expect(shown(password)).not.toContain('swordfish');
    const scheme = refusal({ REDIS_URL: 'http://admin:s3cretpw@redis.internal:6379/0' });
    expect(shown(scheme)).not.toContain('s3cretpw');
    expect(shown(scheme)).not.toContain('admin');
    expect(scheme.message).toContain('redis.internal:6379');
    const nopass = refusal({ REDIS_URL: 'redis://operator@redis.internal:6379' });
    expect(shown(nopass)).not.toContain('operator');
    // A non-secret value is still shown, so an operator can see the typo.
    expect(refusal({ FLEET_PROVIDER: 'dockr' }).message).toContain('"dockr"');
    expect(loadConfig({ FLEET_ADMIN_PASSWORD: 'correct horse battery' }).admin.password).toBe('correct horse battery');
    // Characters, not UTF-16 units or bytes: twelve emoji are twelve characters.
    expect(loadConfig({ FLEET_ADMIN_PASSWORD: '🔑'.repeat(12) }).admin.password).toBe('🔑'.repeat(12));
    expect(() => loadConfig({ FLEET_ADMIN_PASSWORD: '🔑'.repeat(11) })).toThrow(ConfigError);
  });

  it('declares every variable once', () => {
    expect(new Set(CONFIG_VARIABLES).size).toBe(CONFIG_VARIABLES.length);
    expect(CONFIG_VARIABLES.length).toBeGreaterThan(60);
  });

  it('documents each default as a value the variable accepts and compiles to the same config', () => {
    const defaults = loadConfig({}, '/x');
    const spelled = CONFIG_RECORDS.filter((record) => record.defaultText === record.field.fallbackText);
    expect(spelled.length).toBeGreaterThan(50);
    for (const record of spelled) expect(loadConfig({ [record.name]: record.defaultText }, '/x'), record.name).toEqual(defaults);
  });

  it('refuses a flag spelled as an Object.prototype member', () => {
    expect(() => loadConfig({ FLEET_ADMIN_READONLY: 'constructor' })).toThrow(/^FLEET_ADMIN_READONLY: expected true or false/);
  });

  for (const [variable, value] of Object.entries(BAD_VALUES)) {
    it(`refuses a bad ${variable} with one line naming it`, () => {
      let caught: unknown;
      try {
        loadConfig({ [variable]: value });
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(ConfigError);
      const message = (caught as Error).message;
      expect(message.startsWith(`${variable}: expected `)).toBe(true);
      expect(message).toContain('got ');
      expect(message).not.toContain('\n');
    });
  }

  it('covers every variable that has a validation rule', () => {
    const free = new Set(['FLEET_HOME', 'FLEET_LIVE_ROOT', 'FLEET_ARCHIVE_ROOT', 'FLEET_SNAPSHOT_ROOT', 'FLEET_VERCEL_MIRROR_ROOT', 'FLEET_LEGACY_ROOT', 'FLEET_SANDBOX_CGROUP_ROOT', 'FLEET_HTTP_HOST', 'FLEET_VERCEL_TOKEN', 'FLEET_VERCEL_TEAM_ID', 'FLEET_VERCEL_PROJECT_ID', 'VERCEL_OIDC_TOKEN', 'FLEET_REDIS_PASSWORD']);
    const untested = CONFIG_VARIABLES.filter((v) => !free.has(v) && !(v in BAD_VALUES));
    expect(untested).toEqual([]);
  });
});

describe('Redis Cluster configuration', () => {
  it('parses seed nodes to host and port, with the password they need', () => {
    const config = loadConfig({ FLEET_REDIS_CLUSTER_NODES: '10.0.0.1:7000, redis-b.internal:7001', FLEET_REDIS_PASSWORD: 'cluster-secret' });
    expect(config.redis.clusterNodes).toEqual([
      { host: '10.0.0.1', port: 7000 },
      { host: 'redis-b.internal', port: 7001 },
    ]);
    expect(config.redis.clusterPassword).toBe('cluster-secret');
    expect(loadConfig({}).redis.clusterNodes).toBeNull();
  });

  it('refuses a port out of range, and nodes without a password while sandboxes are isolated, naming the variable', () => {
    expect(() => loadConfig({ FLEET_REDIS_CLUSTER_NODES: 'a:70000', FLEET_REDIS_PASSWORD: 'p' })).toThrow(/^FLEET_REDIS_CLUSTER_NODES: expected host:port seed nodes with ports between 1 and 65535, got "a:70000"/);
    expect(() => loadConfig({ FLEET_REDIS_CLUSTER_NODES: 'a:7000' })).toThrow(/^FLEET_REDIS_PASSWORD: expected a password for the cluster nodes/);
    expect(loadConfig({ FLEET_REDIS_CLUSTER_NODES: 'a:7000', FLEET_LOCAL_ISOLATION: 'none' }).redis.clusterNodes).toEqual([{ host: 'a', port: 7000 }]);
  });

  it('never prints the cluster password', () => {
    let caught: unknown;
    try {
      loadConfig({ FLEET_REDIS_CLUSTER_NODES: 'a:1', FLEET_REDIS_PASSWORD: 'hunter2-cluster', FLEET_PROVIDER: 'docker' });
    } catch (error) {
      caught = error;
    }
    expect(String(caught)).not.toContain('hunter2-cluster');
  });
});
