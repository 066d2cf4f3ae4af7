/**
 * cgroup v2 limits of sandboxed commands: where the cgroup v2 tree at FLEET_SANDBOX_CGROUP_ROOT
 * offers the memory, pids and cpu controllers and lets the fleet enable them below it, each
 * command runs in its own cgroup `<root>/fleet-sandboxes-<host>/c-<random>` with `memory.max`,
 * `pids.max` and `cpu.weight`, and the cgroup is killed (`cgroup.kill`) and removed when the
 * command ends. Elsewhere (cgroup v1 or a hybrid layout, no delegation) the rlimits are the
 * floor, and the probe says why. All paths here are the fleet's own (cgroupfs), never a tree a
 * sandbox can write.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Config, SandboxLimitsConfig } from '../config.js';
import { delay } from '../lib/with-timeout.js';

const CONTROLLERS = ['memory', 'pids', 'cpu'] as const;
const MIB = 1024 * 1024;

export interface CgroupProbe {
  /** Parent of the per-command cgroups, or null when limits cannot be enforced by cgroups. */
  readonly parent: string | null;
  readonly reason: string;
}

// Enables the controllers for the children of `dir`.
async function enableControllers(dir: string): Promise<void> {
  await writeFile(path.join(dir, 'cgroup.subtree_control'), CONTROLLERS.map((c) => `+${c}`).join(' '));
}

/** Whether per-command cgroups can be made under the configured root, and where. */
export async function probeCgroups(config: Pick<Config, 'sandbox' | 'hostId'>): Promise<CgroupProbe> {
  const root = config.sandbox.cgroupRoot;
  const listed = await readFile(path.join(root, 'cgroup.controllers'), 'utf8').catch(() => null);
  if (listed === null) return { parent: null, reason: `no cgroup v2 hierarchy at ${root} (no cgroup.controllers)` };
  const available = listed.trim().split(/\s+/).filter(Boolean);
  const missing = CONTROLLERS.filter((c) => !available.includes(c));
  if (missing.length > 0) return { parent: null, reason: `cgroup v2 at ${root} lacks the ${missing.join(', ')} controller(s) (has: ${available.join(' ') || 'none'}; they are bound to cgroup v1)` };
  const parent = path.join(root, `fleet-sandboxes-${config.hostId}`);
  try {
    await enableControllers(root);
    await mkdir(parent, { recursive: true, mode: 0o755 });
    await enableControllers(parent);
  } catch (error) {
    return { parent: null, reason: `cgroup v2 at ${root} is not delegable to the fleet: ${(error as Error).message}` };
  }
  return { parent, reason: `cgroup v2 limits under ${parent}` };
}

export interface CommandCgroup {
  readonly dir: string;
  /** Kills whatever is left in the cgroup and removes it. */
  remove(): Promise<void>;
}

/** Makes the cgroup of one command with the configured limits. */
export async function createCommandCgroup(parent: string, limits: SandboxLimitsConfig): Promise<CommandCgroup> {
  const dir = path.join(parent, `c-${randomBytes(6).toString('hex')}`);
  await mkdir(dir, { mode: 0o755 });
  await writeFile(path.join(dir, 'memory.max'), String(limits.memoryMb * MIB));
  await writeFile(path.join(dir, 'pids.max'), String(limits.pids));
  await writeFile(path.join(dir, 'cpu.weight'), String(limits.cpuWeight));
  return {
    dir,
    async remove() {
      await writeFile(path.join(dir, 'cgroup.kill'), '1').catch(() => undefined);
      // rmdir answers EBUSY until the killed processes are reaped (milliseconds).
      for (let attempt = 0; attempt < 50; attempt++) {
        try {
          await rmdir(dir);
          return;
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          if (code === 'ENOENT') return;
          if (code !== 'EBUSY') throw error;
          await delay(20);
        }
      }
    },
  };
}
