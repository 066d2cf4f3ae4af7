/** Parsers of CLI option values; each throws `UsageError` naming the flag and the value. */
import { UsageError } from '../errors/usage-error.js';
import { QUEUE_NAMES, isQueueName, type QueueName } from '../queues/index.js';
import { REMOTE_PROVIDER_HOSTS } from '../providers/provider-hosts.js';

/** `--queues a,b` → validated base queue names (all when empty). */
export function parseQueueList(flag: string, raw: string | undefined): QueueName[] {
  if (raw === undefined || raw.trim() === '' || raw === 'all') return [...QUEUE_NAMES];
  const names = raw.split(',').map((s) => s.trim()).filter(Boolean);
  for (const name of names) {
    if (!isQueueName(name)) throw new UsageError(`${flag}: unknown queue ${JSON.stringify(name)} (expected ${QUEUE_NAMES.join(', ')})`);
  }
  return [...new Set(names)] as QueueName[];
}

/**
 * `--host a,b` → the hosts whose host-bound queues a worker serves: this host and/or remote
 * provider hosts (a worker can never serve another machine's live trees). Default: this host.
 */
export function parseHostList(flag: string, raw: string | undefined, selfHostId: string): string[] {
  if (raw === undefined || raw.trim() === '') return [selfHostId];
  const hosts = [...new Set(raw.split(',').map((s) => s.trim()).filter(Boolean))];
  const allowed = [selfHostId, ...REMOTE_PROVIDER_HOSTS];
  for (const host of hosts) {
    if (!allowed.includes(host)) throw new UsageError(`${flag}: ${JSON.stringify(host)} is neither this host (FLEET_HOST_ID=${selfHostId}) nor a remote provider host (${REMOTE_PROVIDER_HOSTS.join(', ')})`);
  }
  return hosts;
}

/** A base queue name argument. */
export function parseQueueName(flag: string, raw: string): QueueName {
  if (!isQueueName(raw)) throw new UsageError(`${flag}: unknown queue ${JSON.stringify(raw)} (expected ${QUEUE_NAMES.join(', ')})`);
  return raw;
}

/** A JSON argument. */
export function parseJson(flag: string, raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch (error) {
    throw new UsageError(`${flag}: not valid JSON (${(error as Error).message})`);
  }
}

/** A positive integer of milliseconds. */
export function parseMs(flag: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new UsageError(`${flag}: expected a whole number of milliseconds >= 1, got ${JSON.stringify(raw)}`);
  return Number(raw);
}

/** A percentage written `N%` (0 < N <= 100, decimals allowed), as a number. */
export function parsePercent(flag: string, raw: string): number {
  const match = /^(\d+(?:\.\d+)?)%$/.exec(raw);
  const value = match ? Number(match[1]) : NaN;
  if (!(value > 0 && value <= 100)) throw new UsageError(`${flag}: expected a percentage like 1% (above 0, at most 100%), got ${JSON.stringify(raw)}`);
  return value;
}

const SINCE_UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `--since 90s|30m|1h|2d` (before `now`) or an ISO 8601 time → epoch milliseconds. */
export function parseSince(flag: string, raw: string, now: number): number {
  const relative = /^(\d+)([smhd])$/.exec(raw);
  if (relative) return now - Number(relative[1]) * SINCE_UNITS[relative[2]!]!;
  const at = /^\d{4}-\d{2}-\d{2}T/.test(raw) ? Date.parse(raw) : NaN;
  if (!Number.isFinite(at)) throw new UsageError(`${flag}: expected a duration like 90s, 30m, 1h, 2d or an ISO 8601 time, got ${JSON.stringify(raw)}`);
  return at;
}

/** A whole number from `min` to `max`. */
export function parseCount(flag: string, raw: string, min: number, max: number): number {
  const value = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!(value >= min && value <= max)) throw new UsageError(`${flag}: expected a whole number from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  return value;
}
