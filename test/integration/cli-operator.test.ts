// Operator CLI: `fleet queues ...`, `fleet top`, `fleet completion`, run in-process against the
// shared Redis (and `top`'s live view as a real process).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { fleetKeys } from '../../src/keys.js';
import { main } from '../../src/cli/main.js';
import { CLEAR_SCREEN } from '../../src/cli/commands/top.js';
import { ProviderPermanentError } from '../../src/providers/provider-errors.js';
import type { Config } from '../../src/config.js';
import { addCleanup } from '../helpers/cleanup.js';
import { tempDir, testConfig, testConnection } from '../helpers/fleet-env.js';
import { testClient, testWorkers } from '../helpers/fleet-harness.js';
import { FLEET_BIN, startFleet, cliJson } from '../helpers/processes.js';

// Runs `fleet <args>` in this process with captured output.
async function fleet(args: string[], env: Record<string, string>): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(args, { stdout: (t) => void (out += t), stderr: (t) => void (err += t) }, env);
  return { code, out, err };
}

function queueOf(config: Config, name: string): Queue {
  const queue = new Queue(name, { connection: testConnection(config), prefix: fleetKeys(config.redis.prefix, config.redis.keyLayout).queuePrefix(name) });
  addCleanup(() => queue.close());
  return queue;
}

const manifest = (name: string) => ({ manifest: { schemaVersion: 1 as const, name, runtime: 'node22' } });

describe('fleet queues', () => {
  it('pause and resume (host-bound queues via --host or queue@host); usage errors exit 2', async () => {
    const { config, env } = await testConfig();
    const paused = await fleet(['queues', 'pause', 'gc', '--json'], env);
    expect(paused.code).toBe(0);
    expect(cliJson(paused.out)).toEqual({ queue: 'gc', action: 'pause', jobs: 0, paused: true });
    expect(await queueOf(config, 'gc').isPaused()).toBe(true);
    expect((await fleet(['queues', 'resume', 'gc'], env)).out.trim()).toBe('gc: running');
    expect(await queueOf(config, 'gc').isPaused()).toBe(false);

    expect(cliJson((await fleet(['queues', 'pause', 'persist', '--host', 'host-b', '--json'], env)).out)).toMatchObject({ queue: 'persist@host-b', paused: true });
    expect(await queueOf(config, 'persist@host-b').isPaused()).toBe(true);
    expect(cliJson((await fleet(['queues', 'resume', 'persist@host-b', '--json'], env)).out)).toMatchObject({ queue: 'persist@host-b', paused: false });
    expect(cliJson((await fleet(['queues', 'pause', 'checkpoint', '--json'], env)).out)).toMatchObject({ queue: 'checkpoint@local' });

    for (const args of [
      ['queues', 'freeze', 'gc'],
      ['queues', 'pause', 'nope'],
      ['queues', 'pause', 'gc', '--host', 'h1'],
      ['queues', 'pause', 'persist@h1', '--host', 'h2'],
      ['queues', 'pause', 'persist', '--host', 'bad host'],
      ['queues', 'clean', 'gc', '--state', 'active'],
      ['queues', 'clean', 'gc', '--grace', 'soon'],
    ]) {
      const result = await fleet(args, env);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.err.trim().split('\n'), args.join(' ')).toHaveLength(1);
    }
  });

  it('drain removes waiting jobs; retry-failed and clean act on real failed and completed jobs with a progress bar', async () => {
    const { config, env } = await testConfig();
    const client = testClient(config);
    for (const kind of ['litter', 'idle', 'orphans'] as const) await client.gc({ kind });
    const drained = await fleet(['queues', 'drain', 'gc', '--json'], env);
    expect(cliJson(drained.out)).toMatchObject({ queue: 'gc', action: 'drain', jobs: 3 });
    expect(await queueOf(config, 'gc').getJobCountByTypes('waiting', 'prioritized')).toBe(0);

    const workers = await testWorkers(config, ['bake'], {
      bake: async (payload) => {
        if ((payload as { manifest: { name: string } }).manifest.name.startsWith('bad')) throw new ProviderPermanentError('local', 'snapshot', 'refused');
        return { snapshotId: 'ok' };
      },
    });
    for (const name of ['good-1', 'good-2']) await client.bake(manifest(name), { wait: true, timeoutMs: 30_000 });
    for (const name of ['bad-1', 'bad-2', 'bad-3']) await expect(client.bake(manifest(name), { wait: true, timeoutMs: 30_000 })).rejects.toMatchObject({ code: 'ProviderPermanent' });
    await workers.close();
    const bake = queueOf(config, 'bake');
    expect(await bake.getJobCountByTypes('failed')).toBe(3);

    const retried = await fleet(['queues', 'retry-failed', 'bake'], env);
    expect(retried.code).toBe(0);
    expect(retried.out.trim()).toBe('bake: 3 failed job(s) moved back to waiting');
    expect(retried.err).toContain('retry-failed bake');
    expect(retried.err).toContain('3/3');
    expect(await bake.getJobCountByTypes('failed')).toBe(0);
    expect(await bake.getJobCountByTypes('waiting', 'prioritized')).toBe(3);

    const cleaned = await fleet(['queues', 'clean', 'bake', '--state', 'completed', '--grace', '1', '--json'], env);
    expect(cliJson(cleaned.out)).toMatchObject({ queue: 'bake', action: 'clean', jobs: 2 });
    expect(await bake.getJobCountByTypes('completed')).toBe(0);
    expect(await bake.getJobCountByTypes('waiting', 'prioritized')).toBe(3);
  });
});

describe('fleet top', () => {
  it('--once prints one frame and --json one snapshot of queues, lag and workers', async () => {
    const { config, env } = await testConfig();
    const workers = await testWorkers(config, ['gc']);
    const once = await fleet(['top', '--once'], env);
    expect(once.code).toBe(0);
    expect(once.out).toContain('persist@local');
    expect(once.out).toMatch(/queue\s+waiting\s+active\s+delayed\s+completed\s+failed/);
    expect(once.out).toContain(workers.workers.registration.id);
    expect(once.out).not.toContain(CLEAR_SCREEN);

    const json = await fleet(['top', '--json'], env);
    const snapshot = cliJson(json.out) as { status: { byQueue: Record<string, unknown> }; workers: { id: string; queues: string[] }[]; lag: { maxPersistLagMs: number } };
    expect(Object.keys(snapshot.status.byQueue)).toContain('checkpoint@local');
    expect(snapshot.workers).toEqual([expect.objectContaining({ id: workers.workers.registration.id, queues: ['gc'] })]);
    expect(snapshot.lag.maxPersistLagMs).toBe(0);
  });

  it('off a terminal prints plain frames one after another until interrupted', async () => {
    const { env } = await testConfig();
    const top = startFleet(['top', '--interval', '100'], env);
    await top.waitForOutput(/(workers: none alive[\s\S]*){3}/);
    expect(top.stdout()).not.toContain(CLEAR_SCREEN);
    top.child.kill('SIGINT');
    expect((await top.exited).code).toBe(0);
  });

  it('piped into head, ends quietly when head exits (no EPIPE)', async () => {
    const { env } = await testConfig();
    const shell = { env: { ...env, PATH: process.env.PATH ?? '/usr/bin:/bin' }, encoding: 'utf8' as const, timeout: 60_000 };
    const piped = spawnSync('bash', ['--norc', '--noprofile', '-o', 'pipefail', '-c', `"${process.execPath}" "${FLEET_BIN}" top --interval 50 | head -n 3`], shell);
    expect(piped.stderr).toBe('');
    expect(piped.status).toBe(0);
    expect(piped.stdout.split('\n')).toHaveLength(4);
    // A single frame written whole into a pipe that closes after its first line: the same quiet end.
    const once = spawnSync('bash', ['--norc', '--noprofile', '-o', 'pipefail', '-c', `"${process.execPath}" "${FLEET_BIN}" top --once | head -n 1`], shell);
    expect(once.stderr).toBe('');
    expect(once.status).toBe(0);
  });

  it('on a terminal refreshes in place and quits on q', async () => {
    const { env } = await testConfig();
    // A pseudo-terminal (Python's pty): waits for two frames, types q, reports the exit code.
    const script = [
      'import os, pty, sys, select',
      'pid, fd = pty.fork()',
      'if pid == 0:',
      '    os.execv(sys.argv[1], sys.argv[1:])',
      'out = b""',
      'while out.count(b"\\x1b[H\\x1b[2J") < 2:',
      '    select.select([fd], [], [], 30)',
      '    out += os.read(fd, 65536)',
      'os.write(fd, b"q")',
      'while True:',
      '    try:',
      '        chunk = os.read(fd, 65536)',
      '    except OSError:',
      '        break',
      '    if not chunk:',
      '        break',
      '    out += chunk',
      '_, status = os.waitpid(pid, 0)',
      'print(os.waitstatus_to_exitcode(status), out.count(b"\\x1b[H\\x1b[2J") >= 2, b"workers: none alive" in out)',
    ].join('\n');
    const result = spawnSync('python3', ['-c', script, process.execPath, FLEET_BIN, 'top', '--interval', '100'], { env: { ...env, PATH: process.env.PATH ?? '/usr/bin:/bin' }, encoding: 'utf8', timeout: 60_000 });
    expect(result.stdout.trim()).toBe('0 True True');
  });
});

describe('fleet completion', () => {
  it('bash completes commands, queue actions, queue names and flags', async () => {
    const { env } = await testConfig();
    const result = await fleet(['completion', 'bash'], env);
    expect(result.code).toBe(0);
    const dir = await tempDir('completion');
    const script = path.join(dir, 'fleet.bash');
    await writeFile(script, result.out);
    const complete = (words: string[]) => {
      const line = words.map((w) => `'${w}'`).join(' ');
      const run = spawnSync('bash', ['-c', `source '${script}'; COMP_WORDS=(${line}); COMP_CWORD=${words.length - 1}; _fleet_completion; echo "\${COMPREPLY[*]}"`], { encoding: 'utf8' });
      expect(run.status, run.stderr).toBe(0);
      return run.stdout.trim().split(' ').filter(Boolean);
    };
    expect(complete(['fleet', 'qu'])).toEqual(['queues']);
    expect(complete(['fleet', ''])).toEqual(expect.arrayContaining(['web', 'queues', 'top', 'completion', 'persist']));
    expect(complete(['fleet', 'queues', 'r'])).toEqual(['resume', 'retry-failed']);
    expect(complete(['fleet', 'queues', 'clean', 'pe'])).toEqual(['persist']);
    expect(complete(['fleet', 'queues', 'clean', 'gc', '--s'])).toEqual(['--state']);
    expect(complete(['fleet', 'persist', 'ws-1', '--de'])).toEqual(['--delete']);
    expect(complete(['fleet', 'top', '--'])).toEqual(expect.arrayContaining(['--once', '--json', '--interval']));
  });

  it('zsh wraps the same function with bashcompinit; an unknown shell is a usage error', async () => {
    const { env } = await testConfig();
    const zsh = await fleet(['completion', 'zsh'], env);
    expect(zsh.code).toBe(0);
    expect(zsh.out.startsWith('#compdef fleet\n')).toBe(true);
    expect(zsh.out).toContain('bashcompinit');
    expect(zsh.out).toContain('complete -F _fleet_completion fleet');
    if (existsSync('/usr/bin/zsh') || existsSync('/bin/zsh')) {
      const check = spawnSync('zsh', ['-n'], { input: zsh.out, encoding: 'utf8' });
      expect(check.status, check.stderr).toBe(0);
    }
    const json = await fleet(['completion', 'bash', '--json'], env);
    expect(cliJson(json.out)).toMatchObject({ shell: 'bash', script: expect.stringContaining('_fleet_completion') });
    expect((await fleet(['completion', 'fish'], env)).code).toBe(2);
  });
});
