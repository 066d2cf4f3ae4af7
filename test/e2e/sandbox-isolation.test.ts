// Issue 21, "Must be shown": an agent's code inside its sandbox, run through `fleet exec` and the
// HTTP exec of a running `fleet up` (embedded Redis with its generated password, default
// isolation), tries to reach everything it must not: another workspace's tree, the archive,
// `.fleet`, Redis with and without the password, anything outside its tree, host processes, a
// life past its deadline, the host's processes and disk. Every attempt is refused, a bystander
// workspace is served throughout (exec, persist), and persist + restore round-trip a tree the
// sandbox wrote, modes and ownership (the workspace's uid) included.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { lstat, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ArchiveStore } from '../../src/archive/archive-store.js';
import { archivedFilePath, archivedNode } from '../helpers/archived.js';
import { killGroup, runFleet, startSharedFleet, type Spawned, cliJson } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';

const CANARY = `CANARY-SANDBOX-${process.pid}-${Date.now()}`;
/** Small limits so that the limit attacks end quickly (the defaults are far larger). */
const LIMITS = { FLEET_SANDBOX_PIDS: '64', FLEET_SANDBOX_FILE_BYTES: String(16 * 1024 * 1024), FLEET_SANDBOX_TMP_MB: '8' };
/**
 * Uids no other test file hands out (the others use the default range): this file counts every
 * process of its workspaces' uids on the machine while other files run beside it.
 */
const UIDS = { first: 390_000, last: 390_999 };

interface ExecOutcome {
  readonly exitCode: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly timedOut: boolean;
}

// Uids of every process on the host (from /proc), counted per uid.
function processesOf(uid: number): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const status = readFileSync(`/proc/${name}/status`, 'utf8');
      if (new RegExp(`^Uid:\\s+${uid}\\s`, 'm').test(status)) pids.push(Number(name));
    } catch {
      // the process ended while we looked
    }
  }
  return pids;
}

describe('a sandbox contains its code (namespaces, a uid per workspace, only its own tree)', () => {
  let home: string;
  let env: Record<string, string>;
  let up: Spawned;
  let api: string;
  let fleetPid: number;
  let redisUrl: string;
  const uids: Record<string, number> = {};

  const fleet = (args: string[]) => runFleet(args, env);
  const json = async <T>(args: string[]): Promise<T> => {
    const run = await fleet([...args, '--json']);
    expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(0);
    return cliJson(run.stdout) as T;
  };
  // One command through `fleet exec` (the CLI process runs the sandbox).
  const cliExec = async (ws: string, script: string, timeoutMs = 30_000): Promise<ExecOutcome> => {
    // `fleet exec` exits with the command's code; --json prints the whole result either way.
    const run = await fleet(['exec', ws, '--json', '--timeout', String(timeoutMs), '--', 'sh', '-c', script]);
    expect(run.stdout, run.stderr).toMatch(/^\{/);
    const result = cliJson(run.stdout) as ExecOutcome;
    return { exitCode: result.exitCode, stdout: result.stdout, stderr: result.stderr, timedOut: result.timedOut };
  };
  // The same through the HTTP API of the running fleet (the web process runs the sandbox).
  const httpExec = async (ws: string, script: string, timeoutMs = 30_000): Promise<ExecOutcome> => {
    const response = await fetch(`${api}/v1/workspaces/${ws}/exec`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ cmd: ['sh', '-c', script], timeoutMs }) });
    const body = (await response.json()) as ExecOutcome;
    expect(response.status, JSON.stringify(body)).toBe(200);
    return body;
  };
  const surfaces = [
    ['fleet exec', cliExec],
    ['HTTP exec', httpExec],
  ] as const;
  // Meanwhile another workspace is served: an exec and a reconcile persist both succeed.
  const bystanderTurn = async (turn: string) => {
    const wrote = await cliExec('bystander', `echo ${turn} > turn.txt && cat turn.txt`);
    expect(wrote.stdout).toBe(`${turn}\n`);
    const persisted = await json<{ result: { revision: string } }>(['persist', 'bystander', '--delete', '--wait']);
    expect(persisted.result.revision).toMatch(/^r/);
  };

  beforeAll(async () => {
    // One fleet for the whole file (the per-test cleanup would stop a tracked one and remove a tempDir home).
    home = await mkdtemp(path.join(tmpdir(), 'sandbox-home-'));
    env = { FLEET_HOME: home, FLEET_LOG_LEVEL: 'warn', FLEET_HEARTBEAT_INTERVAL_MS: '500', FLEET_SHUTDOWN_FLUSH_MS: '0', FLEET_HTTP_PORT: '0', FLEET_CHECKPOINT_INTERVAL_MS: '3600000', FLEET_SANDBOX_UID_RANGE: `${UIDS.first}-${UIDS.last}`, ...LIMITS };
    up = startSharedFleet(['up'], env);
    await up.waitForOutput(/web\s+http:\/\/127\.0\.0\.1:\d+/, 60_000);
    api = /web\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(up.stdout())![1]!;
    fleetPid = Number(/process\s+pid (\d+)/.exec(up.stdout())![1]);
    redisUrl = (JSON.parse(readFileSync(path.join(home, 'redis.json'), 'utf8')) as { url: string }).url;
    const status = await json<{ isolation: Record<string, string> }>(['status']);
    expect(status.isolation).toEqual({ local: 'namespaces' });
    for (const ws of ['victim', 'attacker', 'bystander']) {
      await json(['provision', ws, '--wait']);
      uids[ws] = Number((await cliExec(ws, 'id -u')).stdout.trim());
    }
    await cliExec('victim', `echo ${CANARY} > secret.txt && chmod 600 secret.txt`);
    await json(['persist', 'victim', '--delete', '--wait']);
  }, 120_000);

  afterAll(async () => {
    if (up) {
      killGroup(up.child, 'SIGTERM');
      await up.exited;
    }
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('gives every workspace its own uid from the range, owning its 0700 tree; the fleet directories are 0700 root', async () => {
    expect(new Set(Object.values(uids)).size).toBe(3);
    for (const [ws, uid] of Object.entries(uids)) {
      expect(uid).toBeGreaterThanOrEqual(UIDS.first);
      expect(uid).toBeLessThanOrEqual(UIDS.last);
      const root = statSync(path.join(home, 'live', ws, 'root'));
      expect({ ws, uid: root.uid, mode: root.mode & 0o7777 }).toEqual({ ws, uid, mode: 0o700 });
    }
    for (const dir of [home, path.join(home, 'live'), path.join(home, 'archive'), path.join(home, 'redis')]) {
      const stats = statSync(dir);
      expect({ dir, uid: stats.uid, mode: stats.mode & 0o777 }).toEqual({ dir, uid: 0, mode: 0o700 });
    }
    expect(statSync(path.join(home, 'redis.json')).mode & 0o777).toBe(0o600);
  });

  for (const [surface, exec] of surfaces) {
    it(`${surface}: cannot read another workspace's tree, the archive or .fleet`, async () => {
      const probes = [
        `cat ${home}/live/victim/root/secret.txt`,
        `ls ${home}/live`,
        `ls ${home}/archive`,
        `cat ${home}/archive/victim/current/secret.txt`,
        `cat ${home}/redis.json`,
        `ls ${home}`,
        `cat ${home}/redis/redis.conf`,
        // The sandbox's view of /proc is its own pid namespace: no host process's root or environment.
        `cat /proc/${fleetPid}/environ`,
        `ls /proc/${fleetPid}/root${home}`,
        'cat /proc/1/root/etc/shadow',
        'cat /etc/shadow',
      ];
      const [result] = await Promise.all([exec('attacker', probes.map((p) => `(${p}) >/dev/null 2>&1 && echo "READ: ${p}"`).join('; ') + '; echo done'), bystanderTurn(`${surface}-read`)]);
      expect(result.stdout).toBe('done\n');
      // And a whole-filesystem search finds nothing of the victim's.
      const search = await exec('attacker', `grep -rls ${CANARY} /workspace /tmp /etc /work /root /home /var /run /mnt /opt 2>/dev/null; echo searched`);
      expect(search.stdout).toBe('searched\n');
    });

    it(`${surface}: cannot connect to Redis, with or without the password`, async () => {
      const { port, password } = new URL(redisUrl);
      const [result] = await Promise.all([
        exec(
          'attacker',
          [
            `redis-cli -h 127.0.0.1 -p ${port} ping 2>&1`,
            `redis-cli -h 127.0.0.1 -p ${port} -a ${password} --no-auth-warning ping 2>&1`,
            `redis-cli -h 127.0.0.1 -p ${port} -a ${password} --no-auth-warning flushall 2>&1`,
          ].join('; '),
        ),
        bystanderTurn(`${surface}-redis`),
      ]);
      expect(result.stdout).not.toContain('PONG');
      expect(result.stdout).not.toContain('OK');
      expect(result.stdout).toMatch(/Could not connect to Redis at 127\.0\.0\.1:\d+: Connection refused/);
    });

    it(`${surface}: cannot write outside its tree; its /tmp is private and bounded`, async () => {
      const targets = ['/usr/pwned', '/etc/pwned', '/pwned', `${home}/archive/victim/pwned`, `${home}/pwned`, '/proc/sys/kernel/hostname', '/dev/pwned'];
      const [result] = await Promise.all([
        exec('attacker', targets.map((t) => `(echo x > ${t}) 2>/dev/null && echo "WROTE: ${t}"`).join('; ') + `; echo private > /tmp/${CANARY} && echo tmp-ok; head -c 20M /dev/zero > /tmp/fill 2>/dev/null || echo tmp-full`),
        bystanderTurn(`${surface}-write`),
      ]);
      expect(result.stdout).toBe('tmp-ok\ntmp-full\n');
      for (const t of targets.filter((t) => !t.startsWith('/proc') && !t.startsWith('/dev'))) await expect(lstat(t), t).rejects.toThrow();
      await expect(lstat(`/tmp/${CANARY}`)).rejects.toThrow();
    });

    it(`${surface}: cannot see or signal a host process`, async () => {
      const [result] = await Promise.all([
        exec('attacker', `ls /proc | grep -E '^[0-9]+$' | wc -l; kill -0 ${fleetPid} 2>/dev/null && echo "SEES ${fleetPid}"; kill -9 -1 2>/dev/null; echo survived-own-kill`),
        bystanderTurn(`${surface}-signal`),
      ]);
      // Only the sandbox's own few processes (bwrap's init, the shells, ls): never the host's hundreds.
      const [count] = result.stdout.split('\n');
      expect(Number(count)).toBeLessThan(10);
      expect(result.stdout).not.toContain('SEES');
      expect(processesOf(0).includes(fleetPid)).toBe(true);
      expect((await fetch(`${api}/healthz`)).status).toBe(200);
    });

    it(`${surface}: a forked child does not outlive the deadline, nor a command that returns`, async () => {
      const attacker = uids.attacker!;
      const escaped = await exec('attacker', '(setsid sleep 300 &); (nohup sleep 300 >/dev/null 2>&1 &); trap "" TERM HUP; sleep 300', 1_500);
      expect(escaped.timedOut).toBe(true);
      await waitFor('no process of the attacker uid left after the deadline', () => processesOf(attacker).length === 0 || undefined, 10_000);
      // A command that returns at once, leaving a daemon behind: the pid namespace ends with it.
      const returned = await exec('attacker', '(setsid sleep 300 >/dev/null 2>&1 &); echo started');
      expect(returned).toMatchObject({ exitCode: 0, timedOut: false, stdout: 'started\n' });
      await waitFor('no daemon of the attacker uid left after the command returned', () => processesOf(attacker).length === 0 || undefined, 10_000);
    });

    it(`${surface}: a fork bomb stays under the pids limit and dies at the deadline; the host keeps serving`, async () => {
      const attacker = uids.attacker!;
      // The classic bomb under bash, which retries a failed fork (dash gives up on the first one, and the bomb dies out by itself).
      const bomb = exec('attacker', 'exec bash -c "bomb() { bomb | bomb & }; bomb; sleep 300"', 10_000);
      await waitFor('the fork bomb to reach half the pids limit', () => processesOf(attacker).length >= Number(LIMITS.FLEET_SANDBOX_PIDS) / 2 || undefined, 10_000);
      const sampled: number[] = [];
      for (let i = 0; i < 20; i++) sampled.push(processesOf(attacker).length);
      await bystanderTurn(`${surface}-bomb`);
      expect(Math.max(...sampled)).toBeLessThanOrEqual(Number(LIMITS.FLEET_SANDBOX_PIDS));
      expect((await bomb).timedOut).toBe(true);
      await waitFor('no process of the attacker uid left after the bomb', () => processesOf(attacker).length === 0 || undefined, 15_000);
    });

    it(`${surface}: a huge file stops at the file-size limit`, async () => {
      const [result] = await Promise.all([exec('attacker', 'head -c 64M /dev/zero > big.bin; echo "exit $?"; ls -l big.bin | cut -d" " -f5; rm -f big.bin'), bystanderTurn(`${surface}-fsize`)]);
      const [exit, size] = result.stdout.trim().split('\n');
      // SIGXFSZ (153 = 128 + 25) or EFBIG: either way no byte past the limit.
      expect(exit).not.toBe('exit 0');
      expect(Number(size)).toBeLessThanOrEqual(Number(LIMITS.FLEET_SANDBOX_FILE_BYTES));
    });
  }

  it('persist and restore round-trip a tree the sandbox wrote: modes, content and the workspace uid; archived files are root-owned', async () => {
    const ws = 'attacker';
    const uid = uids[ws]!;
    const script = [
      'rm -rf rt && mkdir -p rt/private rt/open',
      'chmod 700 rt/private && chmod 755 rt/open',
      'echo secret > rt/private/key && chmod 600 rt/private/key',
      'echo locked > rt/locked && chmod 000 rt/locked',
      'printf "#!/bin/sh\\necho run\\n" > rt/open/tool && chmod 755 rt/open/tool',
      'echo ro > rt/ro && chmod 444 rt/ro',
      'ln -s private/key rt/link && mkfifo rt/pipe',
    ].join(' && ');
    expect((await cliExec(ws, script)).exitCode).toBe(0);
    const facts = `find rt | sort | xargs stat -c '%n %a %u %F'`;
    const before = (await cliExec(ws, facts)).stdout;
    expect(before).toContain(`rt/locked 0 ${uid} regular`);
    const persisted = await json<{ result: { revision: string } }>(['persist', ws, '--delete', '--wait']);
    // The archive is the fleet's: root-owned, modes kept, the mode-000 file's bytes archived.
    const archive = new ArchiveStore(path.join(home, 'archive'));
    const revision = persisted.result.revision;
    expect(statSync((await archivedFilePath(archive, ws, 'rt/locked', revision))!).uid).toBe(0);
    expect(await archivedNode(archive, ws, 'rt/locked', revision)).toMatchObject({ type: 'file', mode: 0, content: Buffer.from('locked\n') });
    expect(await archivedNode(archive, ws, 'rt/private', revision)).toEqual({ type: 'dir', mode: 0o700 });

    // The sandbox dies; the restore gives the tree back to the same uid (a new generation, the same uid).
    await rm(path.join(home, 'live', ws), { recursive: true, force: true });
    const restored = await json<{ outcome: string; generation: number }>(['provision', ws, '--wait']);
    expect(restored.outcome).toBe('restored');
    expect(Number((await cliExec(ws, 'id -u')).stdout.trim())).toBe(uid);
    expect((await cliExec(ws, facts)).stdout).toBe(before);
    expect((await cliExec(ws, 'cat rt/private/key && rt/open/tool && echo changed > rt/ro 2>/dev/null || echo ro-kept')).stdout).toBe('secret\nrun\nro-kept\n');
    // On the host every entry of the live tree belongs to the uid; the root is 0700.
    const live = path.join(home, 'live', ws, 'root');
    expect(statSync(live).mode & 0o7777).toBe(0o700);
    const owners = new Set<number>();
    const walk = async (dir: string): Promise<void> => {
      for (const entry of await readdir(dir, { withFileTypes: true })) {
        const full = path.join(dir, entry.name);
        owners.add((await lstat(full)).uid);
        if (entry.isDirectory()) await walk(full);
      }
    };
    await walk(live);
    expect([...owners]).toEqual([uid]);
  });
});
