// A hostile agent through the front door: `fleet up`, the agent's code runs through `fleet exec`,
// turns end with `fleet persist`, checkpoints and upload-only persists run, the sandbox dies and
// `fleet provision` restores it; `fleet verify` and the outside world are checked from outside.
import { readFileSync } from 'node:fs';
import { rm, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/fleet-env.js';
import { archiveHolds, HOSTILE_FIXTURE, startSwapper, treeFacts } from '../helpers/hostile-tree.js';
import { killGroup, runFleet, startFleet, cliJson } from '../helpers/processes.js';

const CANARY = `CANARY-CLI-${process.pid}-${Date.now()}`;

describe('hostile tree through the CLI', () => {
  it('planted links, a swap loop, depth past the limit: nothing outside is read or written, restores are exact', { timeout: 240_000 }, async () => {
    const home = await tempDir('hostile-cli');
    const outside = await tempDir('outside');
    await writeFile(path.join(outside, 'secret.txt'), CANARY);
    await mkdir(path.join(outside, 'sub'));
    await writeFile(path.join(outside, 'sub', 'keep.txt'), CANARY);
    const env = { FLEET_HOME: home, FLEET_LOG_LEVEL: 'warn', FLEET_HEARTBEAT_INTERVAL_MS: '500', FLEET_SHUTDOWN_FLUSH_MS: '0', FLEET_TREE_MAX_DEPTH: '64', FLEET_CHECKPOINT_INTERVAL_MS: '3600000', FLEET_HTTP_PORT: '0' };
    const fleet = (args: string[]) => runFleet(args, env);
    const json = async <T>(args: string[]): Promise<T> => {
      const run = await fleet([...args, '--json']);
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(0);
      return cliJson(run.stdout) as T;
    };
    const sh = async (ws: string, script: string) => {
      const run = await fleet(['exec', ws, '--', 'sh', '-c', script]);
      expect(run.code, `${script}: ${run.stderr}`).toBe(0);
      return run.stdout;
    };
    const up = startFleet(['up'], env);
    await up.waitForOutput('workers');
    const archive = path.join(home, 'archive');

    await json(['provision', 'victim', '--wait']);
    await sh('victim', 'mkdir -p src && echo "int main() {}" > src/main.c && echo notes > notes.txt');
    await json(['persist', 'victim', '--delete', '--wait']);
    const victimBefore = await treeFacts(path.join(archive, 'victim'));
    const outsideBefore = await treeFacts(outside);

    await json(['provision', 'attacker', '--wait']);
    // Issue 12 #1: persist x/src/evil.txt, then turn x into a link that resolves to victim/current from inside a revision.
    await sh('attacker', 'mkdir -p x/src && echo evil > x/src/evil.txt && ln -s /etc/shadow x/evil-link');
    await json(['persist', 'attacker', '--wait']);
    await sh(
      'attacker',
      [
        'rm -rf x && ln -s ../../../victim/current x',
        `ln -s ${archive}/victim/current victim-current && ln -s ${outside} outside-dir && ln -s ${outside}/secret.txt secret`,
        `ln -s ${home}/live/victim/root victim-live`,
        "mkfifo pipe && printf 'a' > '-rf' && printf 'b' > \"$(printf 'new\\nline')\" && printf 'c' > 'back\\slash'",
        'echo one > hard-a && ln hard-a hard-b && truncate -s 100M sparse.bin && echo s > setuid && chmod 4755 setuid',
        // The agent's code runs in its sandbox, where the host's fixture path does not exist: it brings the script along.
        `echo ${readFileSync(HOSTILE_FIXTURE).toString('base64')} | base64 -d > .hostile.py && python3 .hostile.py deep . 80 && rm .hostile.py`,
      ].join(' && '),
    );
    // Upload-only persists, checkpoints and turn ends (reconcile), while the agent swaps a directory with a link out.
    await sh('attacker', `mkdir -p d && for i in $(seq 1 50); do echo $i > d/f$i; done && ln -s ${outside} s`);
    const swapper = await startSwapper(path.join(home, 'live', 'attacker', 'root', 'd'), path.join(home, 'live', 'attacker', 'root', 's'));
    const outcomes: string[] = [];
    // Upload-only, a turn end, a checkpoint (exact, walked until two walks agree), and so on.
    const runs = [['persist', 'attacker', '--wait'], ['persist', 'attacker', '--delete', '--wait'], ['persist', 'attacker', '--reason', 'checkpoint', '--wait'], ['persist', 'attacker', '--wait'], ['persist', 'attacker', '--delete', '--wait'], ['persist', 'attacker', '--reason', 'checkpoint', '--wait']];
    for (const args of runs) {
      const run = await fleet([...args, '--json']);
      outcomes.push(run.code === 0 ? 'ok' : (/^fleet: (\w+):/m.exec(run.stderr)?.[1] ?? `exit ${run.code}: ${run.stderr}`));
    }
    await swapper.stop();
    // The loop stopped in either state; put the directory back where the archive had it.
    await sh('attacker', 'if [ -L d ]; then mv d t && mv s d && mv t s; fi');
    // Failures are typed, never raw: a torn reconcile is refused (TreeChanged, retried), and a
    // reconcile that catches `d` swapped away would delete most files (ShrinkGuard).
    for (const outcome of outcomes) expect(['ok', 'TreeChanged', 'ShrinkGuard'], outcomes.join(', ')).toContain(outcome);
    // The last archived state may have `d`'s files under `s` (swapped): moving them back is a
    // mass deletion the shrink guard would refuse, so this turn end is forced.
    const turnEnd = await json<{ result: { refusedEntries: number; refusedPaths: string[]; skippedEntries: number } }>(['persist', 'attacker', '--delete', '--force', '--wait']);
    expect(turnEnd.result.refusedEntries).toBeGreaterThanOrEqual(1);
    expect(turnEnd.result.refusedPaths[0]).toMatch(/^d(\/d)* \(depth\)$/);

    expect((await fleet(['verify', 'victim', 'attacker'])).code).toBe(0);
    expect(await treeFacts(path.join(archive, 'victim'))).toBe(victimBefore);
    expect(await treeFacts(outside)).toBe(outsideBefore);
    expect(archiveHolds(archive, CANARY)).toBe(false);

    // The sandbox dies; the restore brings back the tree exactly, links verbatim.
    await rm(path.join(home, 'live', 'attacker'), { recursive: true, force: true });
    const restored = await json<{ outcome: string }>(['provision', 'attacker', '--wait']);
    expect(restored.outcome).toBe('restored');
    expect(await sh('attacker', 'readlink x; cat ./-rf; stat -c %h hard-a; stat -c %a setuid; test -p pipe && echo fifo; du -k sparse.bin | cut -f1')).toBe(
      '../../../victim/current\na2\n755\nfifo\n0\n',
    );
    expect((await fleet(['verify', 'victim', 'attacker'])).code).toBe(0);
    expect(await treeFacts(outside)).toBe(outsideBefore);
    killGroup(up.child, 'SIGTERM');
    expect((await up.exited).code).toBe(0);
  });
});
