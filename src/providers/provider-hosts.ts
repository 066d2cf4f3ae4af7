/**
 * Hosts of remote providers. A Vercel sandbox's address carries host `vercel`, so its persists
 * and checkpoints go to `persist@vercel` and `checkpoint@vercel`: any process with the archive
 * (and Vercel credentials) can serve those queues, and some process must (issue 19.12).
 */
import type { Config } from '../config.js';
import { VERCEL_HOST_ID } from './vercel/sandbox-info.js';

/** Host ids that are remote providers, never machines of the fleet. */
export const REMOTE_PROVIDER_HOSTS: readonly string[] = Object.freeze([VERCEL_HOST_ID]);

/** Whether this process can reach Vercel: it is the default provider or credentials are configured. */
export function vercelConfigured(config: Config): boolean {
  return config.provider === 'vercel' || config.vercel.token !== null || config.vercel.oidcToken !== null;
}

/** The remote provider hosts whose host-bound queues this configuration needs served. */
export function providerHostsInUse(config: Config): string[] {
  return vercelConfigured(config) ? [VERCEL_HOST_ID] : [];
}
