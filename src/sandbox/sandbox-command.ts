/**
 * The command line that runs one command inside a workspace's sandbox (pure; see README
 * "Isolation"). Three programs, each exec'ing the next:
 *
 *   prlimit   (root)  rlimits every process of the sandbox inherits: RLIMIT_NPROC (counted per
 *                      uid, and every workspace has its own), FSIZE, NOFILE, CPU, no core dumps
 *   bwrap     (root)  new mount, pid, ipc, uts, cgroup and (unless network=host) net namespaces;
 *                      the live tree bound read-write at /workspace from the descriptor the fleet
 *                      opened (`--bind-fd`), read-only /usr, /bin, /lib*, /etc, a fresh /proc of the
 *                      new pid namespace, a minimal /dev; every capability dropped but SETUID/SETGID
 *   setpriv   (root)  becomes the workspace's uid and gid (real, effective, saved), no
 *                      supplementary groups, no capabilities left (bounding set cleared),
 *                      no_new_privs
 *   bwrap     (uid)   a new user namespace mapping only that uid to itself (so files it creates
 *                      belong to the uid on the host too), no further user namespaces
 *                      (`--disable-userns`), its own session, private /tmp and /dev/shm owned by
 *                      the uid, cwd /workspace[/cwd]; then `sh -c 'exec "$0" "$@"'` so a missing
 *                      program answers 127 like a shell
 *
 * Why not one bwrap: run as root, `--unshare-user` maps the sandbox's uid to host root (files it
 * writes would be root's); run as the workspace uid, bwrap 0.8 resolves `--bind-fd`'s target
 * with realpath(3) as that uid and cannot pass the fleet's 0700 directories. `--unshare-all` is
 * not used by the outer bwrap because as root it also makes a user namespace in which only root
 * is mapped, where no uid switch is possible.
 */
import type { SandboxLimitsConfig } from '../config.js';

/** Where the live tree appears inside the sandbox; every command starts there. */
export const SANDBOX_WORKDIR = '/workspace';

/** System directories bound read-only (each only if it exists; /bin etc. are symlinks on merged-/usr systems). */
export const READ_ONLY_SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc'] as const;

export interface SandboxCommandInput {
  /** The workspace's uid (also its gid). */
  readonly uid: number;
  /** Descriptor number of the live tree's root *in the child* (runCommand's `fds` start at 3). */
  readonly treeFd: number;
  /** cwd relative to the tree root ('' = the root), already checked beneath its handle. */
  readonly cwd: string;
  readonly cmd: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly network: 'none' | 'host';
  readonly limits: SandboxLimitsConfig;
  /** cgroup directory the command joins before anything else runs, when cgroups are delegable. */
  readonly cgroupDir?: string;
}

export interface SandboxCommand {
  readonly file: string;
  readonly args: readonly string[];
}

const MIB = 1024 * 1024;

/** The prlimit arguments for the configured limits (pure). */
export function rlimitArgs(limits: SandboxLimitsConfig): string[] {
  return [
    `--nproc=${limits.pids}`,
    `--fsize=${limits.fileBytes}`,
    `--nofile=${limits.openFiles}`,
    ...(limits.cpuSeconds > 0 ? [`--cpu=${limits.cpuSeconds}`] : []),
    '--core=0',
  ];
}

/** The environment a sandboxed command sees: the caller's, with HOME and TMPDIR inside the sandbox. */
export function sandboxEnv(env: Readonly<Record<string, string>>): Record<string, string> {
  return { PATH: '/usr/local/bin:/usr/bin:/bin', ...env, HOME: SANDBOX_WORKDIR, TMPDIR: '/tmp' };
}

/** Builds the full command line (pure). */
export function sandboxCommand(input: SandboxCommandInput): SandboxCommand {
  const { uid, limits } = input;
  const id = String(uid);
  const tmpBytes = String(limits.tmpMb * MIB);
  const outer = [
    '--unshare-ipc',
    '--unshare-pid',
    '--unshare-uts',
    '--unshare-cgroup-try',
    ...(input.network === 'none' ? ['--unshare-net'] : []),
    '--die-with-parent',
    '--hostname',
    'sandbox',
    '--cap-add',
    'CAP_SETUID',
    '--cap-add',
    'CAP_SETGID',
    ...READ_ONLY_SYSTEM_DIRS.flatMap((dir) => ['--ro-bind-try', dir, dir]),
    '--bind-fd',
    String(input.treeFd),
    SANDBOX_WORKDIR,
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    // The mount point of the inner bwrap's private /tmp.
    '--dir',
    '/tmp',
    '--clearenv',
  ];
  const drop = [`--reuid=${id}`, `--regid=${id}`, '--clear-groups', '--inh-caps=-all', '--bounding-set=-all', '--no-new-privs'];
  const chdir = input.cwd === '' ? SANDBOX_WORKDIR : `${SANDBOX_WORKDIR}/${input.cwd}`;
  const inner = [
    '--unshare-user',
    '--disable-userns',
    '--uid',
    id,
    '--gid',
    id,
    '--die-with-parent',
    '--new-session',
    '--dev-bind',
    '/',
    '/',
    '--size',
    tmpBytes,
    '--tmpfs',
    '/tmp',
    '--size',
    tmpBytes,
    '--tmpfs',
    '/dev/shm',
    '--chdir',
    chdir,
    ...Object.entries(sandboxEnv(input.env)).flatMap(([name, value]) => ['--setenv', name, value]),
  ];
  const [file, ...args] = input.cmd;
  const joinCgroup = input.cgroupDir ? ['/bin/sh', '-c', 'echo $$ > "$0/cgroup.procs" && exec "$@"', input.cgroupDir] : [];
  return {
    file: 'prlimit',
    args: [
      ...rlimitArgs(limits),
      '--',
      ...joinCgroup,
      'bwrap',
      ...outer,
      '--',
      'setpriv',
      ...drop,
      '--',
      'bwrap',
      ...inner,
      '--',
      '/bin/sh',
      '-c',
      'exec "$0" "$@"',
      file!,
      ...args,
    ],
  };
}
