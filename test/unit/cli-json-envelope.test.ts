// One `--json` envelope for every command: `{ ok: true, data }`, or `{ ok: false, error }` when
// it fails (bad input, usage errors, Redis unreachable), beside the one line on stderr.
import { describe, expect, it } from 'vitest';
import { cliInProcess } from '../helpers/cli-in-process.js';

const fleet = cliInProcess;

describe('the --json envelope', () => {
  it('wraps a result as { ok: true, data }', async () => {
    const env = await fleet(['env', '--json']);
    expect(env.code).toBe(0);
    const parsed = JSON.parse(env.stdout) as { ok: boolean; data: { name: string }[] };
    expect(parsed.ok).toBe(true);
    expect(parsed.data.map((v) => v.name)).toContain('FLEET_GC_SCHEDULE');
  });

  it.each([
    [['workspace', 'show', 'bad id!', '--json'], 2, 'PayloadInvalid', /workspace/],
    [['jobs', 'list', '--since', 'soon', '--json'], 2, 'Usage', /--since: expected a duration/],
    [['jobs', 'list', '--bogus', '--json'], 2, 'Usage', /unknown option '--bogus'/],
    [['workspace', 'list', '--json'], 1, 'RedisUnavailable', /127\.0\.0\.1:1/],
  ])('fleet %j fails as { ok: false, error } with exit %i', async (argv, exit, code, message) => {
    const run = await fleet(argv, { REDIS_URL: 'redis://127.0.0.1:1', FLEET_REDIS_COMMAND_TIMEOUT_MS: '1000', FLEET_LOCAL_ISOLATION: 'none' });
    expect(run.code).toBe(exit);
    const parsed = JSON.parse(run.stdout) as { ok: boolean; error: { code: string; message: string; retryable: boolean; context: object } };
    expect(parsed).toMatchObject({ ok: false, error: { code, message: expect.stringMatching(message), retryable: expect.any(Boolean), context: expect.any(Object) } });
    expect(run.stderr).toContain(`fleet: `);
  });

  it('prints no envelope without --json', async () => {
    const run = await fleet(['workspace', 'show', 'bad id!']);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
  });
});

describe('--help', () => {
  it('ends with examples for the commands people type most', async () => {
    for (const command of ['persist', 'exec', 'provision', 'verify', 'gc', 'queues', 'top', 'history', 'rollback']) {
      const help = await fleet([command, '--help']);
      expect(help.code, command).toBe(0);
      expect(help.stdout, command).toMatch(new RegExp(`\\nExamples:\\n  fleet ${command}\\b`));
    }
    expect((await fleet(['jobs', 'list', '--help'])).stdout).toContain('fleet jobs retry --state failed --since 1h');
  });
});
