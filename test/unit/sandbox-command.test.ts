// The sandbox command line (pure): namespaces, the uid switch, the tree bound from its
// descriptor, limits, the environment and the cwd inside the sandbox.
import { describe, expect, it } from 'vitest';
import { rlimitArgs, sandboxCommand, sandboxEnv, SANDBOX_WORKDIR } from '../../src/sandbox/sandbox-command.js';
import { loadConfig } from '../../src/config.js';

const limits = loadConfig({}).sandbox.limits;
const build = (overrides: Partial<Parameters<typeof sandboxCommand>[0]> = {}) =>
  sandboxCommand({ uid: 200_123, treeFd: 3, cwd: '', cmd: ['make', 'test'], env: { LANG: 'C' }, network: 'none', limits, ...overrides });

// The arguments of one program of the chain.
function segment(args: readonly string[], program: string, occurrence = 0): string[] {
  const starts = args.flatMap((a, i) => (a === program && (i === 0 || args[i - 1] === '--') ? [i] : []));
  const start = starts[occurrence]!;
  const end = args.indexOf('--', start + 1);
  return args.slice(start + 1, end);
}

describe('sandboxCommand', () => {
  it('chains prlimit, a root bwrap, setpriv to the uid and a user-namespace bwrap, then the command via sh', () => {
    const { file, args } = build();
    expect(file).toBe('prlimit');
    expect(args.slice(-6)).toEqual(['--', '/bin/sh', '-c', 'exec "$0" "$@"', 'make', 'test']);
    const programs = args.filter((a, i) => args[i - 1] === '--');
    expect(programs).toEqual(['bwrap', 'setpriv', 'bwrap', '/bin/sh']);
  });

  it('the outer bwrap: new mount/pid/ipc/uts/cgroup/net namespaces, dies with its parent, the tree from fd 3 at /workspace, read-only system dirs', () => {
    const outer = segment(build().args, 'bwrap', 0);
    for (const flag of ['--unshare-ipc', '--unshare-pid', '--unshare-uts', '--unshare-net', '--unshare-cgroup-try', '--die-with-parent', '--clearenv']) expect(outer).toContain(flag);
    // Not --unshare-all: as root it would also make a user namespace where no uid switch is possible.
    expect(outer).not.toContain('--unshare-all');
    expect(outer.join(' ')).toContain(`--bind-fd 3 ${SANDBOX_WORKDIR}`);
    for (const dir of ['/usr', '/etc', '/bin', '/lib']) expect(outer.join(' ')).toContain(`--ro-bind-try ${dir} ${dir}`);
    expect(outer.join(' ')).toContain('--proc /proc');
    expect(outer.join(' ')).toContain('--dev /dev');
    expect(outer.join(' ')).not.toMatch(/--bind(-try)? \/ /);
    expect(outer.join(' ')).toContain('--cap-add CAP_SETUID --cap-add CAP_SETGID');
  });

  it('keeps the host network only when asked', () => {
    expect(segment(build({ network: 'host' }).args, 'bwrap', 0)).not.toContain('--unshare-net');
  });

  it('setpriv drops to the uid with no groups, no capabilities and no_new_privs', () => {
    expect(segment(build().args, 'setpriv')).toEqual(['--reuid=200123', '--regid=200123', '--clear-groups', '--inh-caps=-all', '--bounding-set=-all', '--no-new-privs']);
  });

  it('the inner bwrap: a user namespace mapping the uid, no nested user namespaces, own session, private /tmp, cwd inside /workspace', () => {
    const inner = segment(build({ cwd: 'src/app' }).args, 'bwrap', 1);
    expect(inner.join(' ')).toContain('--unshare-user --disable-userns --uid 200123 --gid 200123 --die-with-parent --new-session');
    expect(inner.join(' ')).toContain(`--size ${limits.tmpMb * 1024 * 1024} --tmpfs /tmp`);
    expect(inner.join(' ')).toContain(`--chdir ${SANDBOX_WORKDIR}/src/app`);
    expect(inner.join(' ')).toContain('--setenv HOME /workspace');
    expect(inner.join(' ')).toContain('--setenv LANG C');
  });

  it('rlimits: processes, file size, open files, CPU seconds (0 = none), no core dumps', () => {
    expect(rlimitArgs({ ...limits, pids: 64, fileBytes: 1_048_576, openFiles: 256, cpuSeconds: 10 })).toEqual(['--nproc=64', '--fsize=1048576', '--nofile=256', '--cpu=10', '--core=0']);
    expect(rlimitArgs({ ...limits, cpuSeconds: 0 })).not.toContain('--cpu=0');
  });

  it('joins a cgroup first when one is given', () => {
    const { args } = build({ cgroupDir: '/sys/fs/cgroup/fleet-sandboxes-local/c-1' });
    const dash = args.indexOf('--');
    expect(args.slice(dash + 1, dash + 5)).toEqual(['/bin/sh', '-c', 'echo $$ > "$0/cgroup.procs" && exec "$@"', '/sys/fs/cgroup/fleet-sandboxes-local/c-1']);
  });

  it('the environment: the caller\'s, with HOME and TMPDIR inside the sandbox', () => {
    expect(sandboxEnv({ HOME: '/root', PATH: '/bin', X: '1' })).toEqual({ PATH: '/bin', X: '1', HOME: '/workspace', TMPDIR: '/tmp' });
  });
});
