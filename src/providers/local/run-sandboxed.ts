/**
 * Runs one command of a workspace in its sandbox (src/sandbox/sandbox-command.ts): as the
 * workspace's uid, the live tree bound at /workspace from the handle the provider opened (the
 * child gets it as fd 3; bwrap closes it after the mount), with the host's limits, in its own
 * cgroup where cgroup v2 is delegable. The deadline and the caller's signal terminate the outer
 * bwrap's process group (SIGTERM, SIGKILL after runCommand's grace); its death takes the
 * sandbox's whole pid namespace with it (`--die-with-parent`).
 */
import { runCommand } from '../../lib/run-command.js';
import { createCommandCgroup, type CommandCgroup } from '../../sandbox/cgroup-limits.js';
import type { Isolation } from '../../sandbox/isolation.js';
import { sandboxCommand } from '../../sandbox/sandbox-command.js';
import type { DirHandle } from '../../tree/dir-handle.js';
import type { ExecRequest, ExecResult } from '../sandbox-provider.js';
import { classifyFsError } from './classify-fs-error.js';

/** Descriptor number of the live tree in the child (runCommand passes `fds` from 3 on). */
const CHILD_TREE_FD = 3;

export interface SandboxedRun {
  readonly isolation: Isolation;
  readonly uid: number;
  /** The live tree's root, open; its cwd (`request.cwd`) was already checked beneath it. */
  readonly root: DirHandle;
  readonly request: ExecRequest;
  /** PATH that finds prlimit, bwrap and setpriv. */
  readonly systemPath: string;
}

export async function runSandboxed({ isolation, uid, root, request, systemPath }: SandboxedRun): Promise<ExecResult> {
  let cgroup: CommandCgroup | null = null;
  try {
    if (isolation.cgroupParent) cgroup = await createCommandCgroup(isolation.cgroupParent, isolation.limits);
    const { file, args } = sandboxCommand({
      uid,
      treeFd: CHILD_TREE_FD,
      // Checked beneath the handle by the caller; inside the sandbox it resolves in the sandbox's own view.
      cwd: request.cwd ?? '',
      cmd: request.cmd,
      env: request.env ?? {},
      network: isolation.network,
      limits: isolation.limits,
      ...(cgroup ? { cgroupDir: cgroup.dir } : {}),
    });
    const result = await runCommand(file, args, {
      cwd: '/',
      env: { PATH: systemPath },
      timeoutMs: request.timeoutMs,
      fds: [root.fd],
      signal: request.signal,
      ...(request.stdin === undefined ? {} : { input: request.stdin }),
      ...(request.onStdout ? { onStdout: request.onStdout } : {}),
      ...(request.onStderr ? { onStderr: request.onStderr } : {}),
    });
    return { exitCode: result.exitCode, signal: result.signal, stdout: result.stdout, stderr: result.stderr, timedOut: result.timedOut, durationMs: result.durationMs };
  } catch (error) {
    throw classifyFsError(error, 'exec');
  } finally {
    await cgroup?.remove().catch(() => undefined);
  }
}
