/**
 * The isolation a host's local provider actually applies, decided once per process from
 * `FLEET_LOCAL_ISOLATION` and the start-up probe (prepare-isolation.ts).
 */
import type { Config } from '../config.js';

export interface Isolation {
  /** `namespaces`: bubblewrap + a uid per workspace; `none`: the fleet's user, host in view. */
  readonly mode: 'namespaces' | 'none';
  /** Why this mode (the configured value, the probe's finding). */
  readonly reason: string;
  readonly network: Config['sandbox']['network'];
  readonly limits: Config['sandbox']['limits'];
  /** Where per-command cgroups go, or null when cgroup v2 is not delegable (rlimits only). */
  readonly cgroupParent: string | null;
  /** Why cgroup limits are (not) enforced. */
  readonly cgroupReason: string;
}

/** No isolation, e.g. for a provider built without one (tests of host-side code). */
export function noIsolation(reason: string, config?: Pick<Config, 'sandbox'>): Isolation {
  return {
    mode: 'none',
    reason,
    network: config?.sandbox.network ?? 'host',
    limits: config?.sandbox.limits ?? { pids: 0, fileBytes: 0, openFiles: 0, cpuSeconds: 0, memoryMb: 0, cpuWeight: 0, tmpMb: 0 },
    cgroupParent: null,
    cgroupReason: 'no isolation',
  };
}
