/**
 * Decides, once per process, how the local provider contains commands: the configured
 * `FLEET_LOCAL_ISOLATION` checked against the start-up probe. `none` (asked for, or `auto`
 * without a working sandbox) is logged as a warning; `namespaces` asked for but unavailable stops
 * start-up (IsolationUnavailableError). With namespaces the fleet's directories are made 0700.
 */
import type { Config } from '../config.js';
import { IsolationUnavailableError } from '../errors/isolation-unavailable-error.js';
import type { Logger } from '../logger.js';
import { probeCgroups } from './cgroup-limits.js';
import type { Isolation } from './isolation.js';
import { noIsolation } from './isolation.js';
import { probeSandbox } from './probe-sandbox.js';
import { secureFleetDirs } from './secure-fleet-dirs.js';

const decided = new WeakMap<Config, Promise<Isolation>>();

/** The isolation of this process for `config` (probed on first call, then remembered). */
export function prepareIsolation(config: Config, logger: Logger): Promise<Isolation> {
  let pending = decided.get(config);
  if (!pending) {
    pending = decide(config, logger);
    decided.set(config, pending);
    // A failed decision is not cached: the next call probes again.
    pending.catch(() => decided.delete(config));
  }
  return pending;
}

async function decide(config: Config, logger: Logger): Promise<Isolation> {
  const configured = config.sandbox.isolation;
  if (configured === 'none') {
    logger.warn({ isolation: 'none' }, 'FLEET_LOCAL_ISOLATION=none: sandbox commands run as the fleet user with the whole host in view (development only)');
    return noIsolation('FLEET_LOCAL_ISOLATION=none', config);
  }
  const probe = await probeSandbox(config);
  if (!probe.ok) {
    if (configured === 'namespaces') throw new IsolationUnavailableError(probe.reason);
    logger.warn({ isolation: 'none', reason: probe.reason }, `no sandbox isolation: ${probe.reason}; commands run as the fleet user with the whole host in view (set FLEET_LOCAL_ISOLATION=none to silence, or fix it)`);
    return noIsolation(`auto: probe failed: ${probe.reason}`, config);
  }
  for (const finding of await secureFleetDirs(config.paths)) {
    logger.warn({ path: finding.path }, `fleet directory ${finding.path} ${finding.problem}: sandboxes may be able to read it`);
  }
  const cgroups = await probeCgroups(config);
  // Logged once per daemon by fleet-process.ts; here only at debug (every CLI command probes too).
  logger.debug({ cgroups: cgroups.reason }, 'cgroup probe');
  return {
    mode: 'namespaces',
    reason: configured === 'auto' ? 'auto: probe passed' : 'FLEET_LOCAL_ISOLATION=namespaces',
    network: config.sandbox.network,
    limits: config.sandbox.limits,
    cgroupParent: cgroups.parent,
    cgroupReason: cgroups.reason,
  };
}
