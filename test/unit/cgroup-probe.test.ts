// The cgroup v2 probe: limits only where memory, pids and cpu can be delegated below the root;
// a hybrid or v1 layout (like the CI machine's) is reported with its reason, rlimits only.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createCommandCgroup, probeCgroups } from '../../src/sandbox/cgroup-limits.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});
const configAt = (root: string) => loadConfig({ FLEET_SANDBOX_CGROUP_ROOT: root, FLEET_HOST_ID: 'h1' });

describe('probeCgroups', () => {
  it('refuses a directory without cgroup.controllers (no cgroup v2 there)', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'cg-'));
    dirs.push(root);
    expect(await probeCgroups(configAt(root))).toEqual({ parent: null, reason: `no cgroup v2 hierarchy at ${root} (no cgroup.controllers)` });
  });

  it('refuses a hierarchy whose memory/pids/cpu controllers are elsewhere (hybrid layout)', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'cg-'));
    dirs.push(root);
    await writeFile(path.join(root, 'cgroup.controllers'), 'hugetlb\n');
    const probe = await probeCgroups(configAt(root));
    expect(probe.parent).toBeNull();
    expect(probe.reason).toContain('lacks the memory, pids, cpu controller(s) (has: hugetlb');
  });

  it('enables the controllers and makes the host parent where they are available', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'cg-'));
    dirs.push(root);
    await writeFile(path.join(root, 'cgroup.controllers'), 'cpuset cpu io memory pids\n');
    const probe = await probeCgroups(configAt(root));
    expect(probe.parent).toBe(path.join(root, 'fleet-sandboxes-h1'));
    expect(await readFile(path.join(root, 'cgroup.subtree_control'), 'utf8')).toBe('+memory +pids +cpu');
    expect(await readFile(path.join(probe.parent!, 'cgroup.subtree_control'), 'utf8')).toBe('+memory +pids +cpu');
    const limits = loadConfig({ FLEET_SANDBOX_MEMORY_MB: '64', FLEET_SANDBOX_PIDS: '32', FLEET_SANDBOX_CPU_WEIGHT: '50' }).sandbox.limits;
    const cgroup = await createCommandCgroup(probe.parent!, limits);
    expect(await readFile(path.join(cgroup.dir, 'memory.max'), 'utf8')).toBe(String(64 * 1024 * 1024));
    expect(await readFile(path.join(cgroup.dir, 'pids.max'), 'utf8')).toBe('32');
    expect(await readFile(path.join(cgroup.dir, 'cpu.weight'), 'utf8')).toBe('50');
  });

  it('on this machine: says why cgroup limits are (not) enforced', async () => {
    const probe = await probeCgroups(loadConfig({}));
    expect(probe.reason.length).toBeGreaterThan(0);
    if (probe.parent === null) expect(probe.reason).toMatch(/cgroup/);
  });
});
