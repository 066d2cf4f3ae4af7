/**
 * The start-up probe of namespaced sandboxes: runs the exact command line every exec uses
 * (sandbox-command.ts) on a scratch tree owned by a sandbox uid and checks that the command ran
 * as that uid on the host. Anything else (not root, no bubblewrap, user namespaces disabled, a
 * kernel that refuses a mount) is a finding, not a crash: the caller decides what it means.
 */
import { lstat, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { chown } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Config } from '../config.js';
import { runCommand } from '../lib/run-command.js';
import { DirHandle } from '../tree/dir-handle.js';
import { sandboxCommand } from './sandbox-command.js';

export type ProbeResult = { readonly ok: true } | { readonly ok: false; readonly reason: string };

/** Processes the probe itself needs (prlimit → bwrap → its init → setpriv → bwrap → sh), with room. */
const PROBE_EXTRA_PROCESSES = 16;
/** Deadline of the probe: bwrap starts in milliseconds; a hang is a finding too. */
const PROBE_TIMEOUT_MS = 15_000;

export async function probeSandbox(config: Pick<Config, 'sandbox' | 'systemPath'>): Promise<ProbeResult> {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) {
    return { ok: false, reason: 'the fleet does not run as root (giving each workspace its own uid needs CAP_SETUID)' };
  }
  const uid = config.sandbox.uidRange.last;
  const scratch = await mkdtemp(path.join(tmpdir(), 'fleet-sandbox-probe-'));
  try {
    const tree = path.join(scratch, 'tree');
    await mkdir(tree, { mode: 0o700 });
    await chown(tree, uid, uid);
    const root = await DirHandle.open(tree);
    try {
      const { file, args } = sandboxCommand({
        uid,
        treeFd: 3,
        cwd: '',
        cmd: ['/bin/sh', '-c', `test "$(id -u)" = ${uid} && : > probe`],
        env: {},
        network: config.sandbox.network,
        // The uid may belong to a workspace running at its own process limit: room above it, so that
        // a sandbox cannot make the probe fail (and `auto` fall back to no isolation).
        limits: { ...config.sandbox.limits, pids: config.sandbox.limits.pids + PROBE_EXTRA_PROCESSES },
      });
      const run = await runCommand(file, args, { cwd: '/', env: { PATH: config.systemPath }, timeoutMs: PROBE_TIMEOUT_MS, fds: [root.fd] }).catch((error: unknown) => error as Error);
      if (run instanceof Error) return { ok: false, reason: `cannot run prlimit/bwrap/setpriv: ${run.message}` };
      if (run.timedOut) return { ok: false, reason: `the probe sandbox did not finish within ${PROBE_TIMEOUT_MS} ms` };
      if (run.exitCode !== 0) return { ok: false, reason: `the probe sandbox failed (exit ${run.exitCode}): ${run.stderr.trim().slice(0, 300) || 'no output'}` };
    } finally {
      await root.close();
    }
    const made = await lstat(path.join(tree, 'probe')).catch(() => null);
    if (!made || made.uid !== uid) return { ok: false, reason: `a file made in the probe sandbox is not owned by uid ${uid} on the host` };
    return { ok: true };
  } finally {
    await rm(scratch, { recursive: true, force: true }).catch(() => undefined);
  }
}
