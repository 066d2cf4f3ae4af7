/**
 * Fault injection while the workload runs: SIGKILL and SIGSTOP/SIGCONT of workers, SIGKILL of
 * their child processes (the `sync -f` of a persist's durability step, a restore's rsync, a
 * `mkfifo`), a Redis restart (AOF), the archive made read-only for a while (a read-only bind
 * mount as root, chattr +i as a fallback, chmod when not root), a host that stops heartbeating
 * (all its processes paused), and a Vercel outage (the loopback stand-in refuses connections for
 * a while).
 */
import { spawnSync } from 'node:child_process';
import type { ManagedProcess } from './fleet-processes.js';
import type { Rng } from '../test/helpers/rng.js';
import type { RedisProcess } from './redis-process.js';

export type FaultName = 'killWorker' | 'pauseWorker' | 'killChild' | 'restartRedis' | 'archiveReadOnly' | 'hostStop' | 'vercelOutage';

export interface FaultContext {
  readonly rng: Rng;
  readonly processes: readonly ManagedProcess[];
  readonly redis: RedisProcess;
  readonly archiveRoot: string;
  readonly hostToStop: string;
  /** The Vercel stand-in: refuse and accept connections again. */
  readonly vercel: { refuseConnections(): Promise<void>; acceptConnections(): Promise<void> };
  readonly log: (line: string) => void;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// Makes `dir` read-only (EROFS) with a read-only bind mount as root, or chmod otherwise; null
// when neither works here (the fault is then skipped and reported).
function makeReadOnly(dir: string): { method: string; undo: () => void } | null {
  if (process.getuid?.() === 0) {
    if (spawnSync('mount', ['--bind', dir, dir], { stdio: 'ignore' }).status !== 0) return null;
    // A remount can fail while a writer holds a file open (EBUSY): try a few times, and never
    // leave a stray read-write bind mount behind.
    let readOnly = false;
    for (let i = 0; i < 5 && !readOnly; i++) readOnly = spawnSync('mount', ['-o', 'remount,ro,bind', dir], { stdio: 'ignore' }).status === 0;
    if (!readOnly) {
      spawnSync('umount', ['-l', dir], { stdio: 'ignore' });
      return null;
    }
    // Lazy unmount: detaches at once even while workers hold files open under it.
    return { method: 'ro-bind-mount', undo: () => void spawnSync('umount', ['-l', dir], { stdio: 'ignore' }) };
  }
  if (spawnSync('chmod', ['-R', 'a-w', dir], { stdio: 'ignore' }).status !== 0) return null;
  return { method: 'chmod', undo: () => void spawnSync('chmod', ['-R', 'u+w', dir], { stdio: 'ignore' }) };
}

export async function injectFault(name: FaultName, ctx: FaultContext): Promise<void> {
  const { rng, processes, log } = ctx;
  switch (name) {
    case 'killWorker': {
      const victim = rng.pick(processes);
      log(`fault: SIGKILL ${victim.spec.name}`);
      await victim.kill('SIGKILL');
      await pause(rng.int(200, 1_500));
      await victim.restart();
      return;
    }
    case 'pauseWorker': {
      const victim = rng.pick(processes.filter((p) => p.alive));
      log(`fault: SIGSTOP ${victim.spec.name}`);
      victim.signal('SIGSTOP');
      await pause(rng.int(1_000, 4_000));
      victim.signal('SIGCONT');
      return;
    }
    case 'killChild': {
      // Wait (briefly) for a command a worker runs (a persist's `sync -f` or change scan, a
      // restore's rsync), so the kill lands mid-step. Only descendants of this run's workers: the
      // machine is shared. `sync` and `find` run in a worker's shell helpers, two levels down.
      let pids: string[] = [];
      for (let i = 0; i < 100 && pids.length === 0; i++) {
        let level = processes.filter((p) => p.alive && p.child?.pid).map((p) => String(p.child!.pid));
        for (let depth = 0; depth < 4 && level.length > 0 && pids.length === 0; depth++) {
          pids = pgrep(['-P', level.join(','), '-x', 'rsync|sync|mkfifo|cp|find']);
          level = pgrep(['-P', level.join(',')]);
        }
        if (pids.length === 0) await pause(20);
      }
      if (pids.length === 0) {
        log('fault: no worker child running to kill');
        return;
      }
      const pid = Number(rng.pick(pids));
      log(`fault: SIGKILL worker child ${pid}`);
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // finished meanwhile
      }
      return;
    }
    case 'restartRedis':
      log('fault: restart redis');
      await ctx.redis.restart();
      return;
    case 'archiveReadOnly': {
      const ro = makeReadOnly(ctx.archiveRoot);
      if (!ro) throw new Error('cannot make the archive read-only on this machine');
      log(`fault: archive read-only (${ro.method})`);
      await pause(rng.int(1_000, 3_000));
      ro.undo();
      return;
    }
    case 'hostStop': {
      const victims = processes.filter((p) => p.spec.hostId === ctx.hostToStop && p.alive);
      log(`fault: host ${ctx.hostToStop} stops (${victims.length} processes paused)`);
      for (const v of victims) v.signal('SIGSTOP');
      await pause(rng.int(2_500, 5_000));
      for (const v of victims) v.signal('SIGCONT');
      return;
    }
    case 'vercelOutage': {
      log('fault: vercel refuses connections');
      await ctx.vercel.refuseConnections();
      await pause(rng.int(1_000, 3_000));
      await ctx.vercel.acceptConnections();
      return;
    }
  }
}

// The pids `pgrep args` lists.
function pgrep(args: readonly string[]): string[] {
  return spawnSync('pgrep', [...args]).stdout.toString().split('\n').filter(Boolean);
}
