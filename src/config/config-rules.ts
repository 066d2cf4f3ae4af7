/**
 * Compile steps of variables whose value depends on another variable: the rules spanning
 * variables, each throwing a `ConfigError` that names the variable it sits on.
 */
import path from 'node:path';
import { ConfigError } from '../errors/config-error.js';
import type { CompileContext } from './config-variable.js';
import { redacted } from './redacted.js';

/** The shortest Bull Board password accepted (the board can retry and drain every queue). */
export const MIN_ADMIN_PASSWORD_CHARS = 12;

/** One seed node of a Redis Cluster. */
export interface ClusterNode {
  readonly host: string;
  readonly port: number;
}

// Cluster seed nodes as host and port; a port out of range, or nodes without a password while
// sandboxes are isolated (the same rule as REDIS_URL's), name the variable.
export function clusterNodes(items: readonly string[] | null, { parsed }: CompileContext): readonly ClusterNode[] | null {
  if (items === null) return null;
  const nodes = items.map((item) => {
    const at = item.lastIndexOf(':');
    const port = Number(item.slice(at + 1));
    if (!Number.isInteger(port) || port < 1 || port > 65_535) throw new ConfigError('FLEET_REDIS_CLUSTER_NODES', 'host:port seed nodes with ports between 1 and 65535', items.join(','));
    return Object.freeze({ host: item.slice(0, at), port });
  });
  if (parsed.FLEET_LOCAL_ISOLATION !== 'none' && !parsed.FLEET_REDIS_PASSWORD) {
    throw new ConfigError(
      'FLEET_REDIS_PASSWORD',
      "a password for the cluster nodes (required with FLEET_REDIS_CLUSTER_NODES): sandboxes must not be able to use the fleet's Redis (FLEET_LOCAL_ISOLATION=none exempts it)",
      undefined,
    );
  }
  return Object.freeze(nodes);
}

// Refuses a production Redis without a password while sandboxes are isolated (see README).
export function requireRedisPassword(url: string | null, { parsed }: CompileContext): string | null {
  if (url === null || parsed.FLEET_LOCAL_ISOLATION === 'none') return url;
  let password = '';
  try {
    password = new URL(url).password;
  } catch {
    password = '';
  }
  if (password === '') {
    throw new ConfigError(
      'REDIS_URL',
      'a URL with a password (redis://:<password>@host:port): sandboxes must not be able to use the fleet\'s Redis (FLEET_LOCAL_ISOLATION=none exempts it)',
      redacted(url),
    );
  }
  return url;
}

// A Bull Board password long enough not to be guessed (the board is an operator's whole control of the queues).
export function adminPassword(password: string | null): string | null {
  if (password !== null && [...password].length < MIN_ADMIN_PASSWORD_CHARS) {
    throw new ConfigError('FLEET_ADMIN_PASSWORD', `a password of at least ${MIN_ADMIN_PASSWORD_CHARS} characters (unset disables the board)`, redacted(password));
  }
  return password;
}

// Host networking puts the loopback HTTP API in every sandbox's reach: it must not be open.
export function requireTokensForHostNetwork(network: 'none' | 'host', { parsed }: CompileContext): 'none' | 'host' {
  if (network === 'host' && parsed.FLEET_LOCAL_ISOLATION !== 'none' && parsed.FLEET_API_TOKENS.length === 0) {
    throw new ConfigError('FLEET_SANDBOX_NETWORK', 'none unless FLEET_API_TOKENS is set: with host networking a sandbox reaches the loopback HTTP API, open without tokens', network);
  }
  return network;
}

// Loopback unless tokens protect the API.
export function httpHost(host: string | null, { parsed }: CompileContext): string {
  return host ?? (parsed.FLEET_API_TOKENS.length > 0 ? '0.0.0.0' : '127.0.0.1');
}

// The objects GC's grace: given, or 3 × the longest writer deadline; never within twice that deadline.
export function objectGraceMs(given: number | null, { parsed }: CompileContext): number {
  const longest = Math.max(parsed.FLEET_PERSIST_DEADLINE_MS, parsed.FLEET_BACKFILL_DEADLINE_MS);
  const grace = given ?? 3 * longest;
  if (grace <= 2 * longest) {
    throw new ConfigError('FLEET_OBJECT_GRACE_MS', `more than twice the longest persist or backfill deadline (${2 * longest} ms): an object a writer still running needs must never be old enough to collect`, String(given));
  }
  return grace;
}

// An absolute path: relative ones are taken from the working directory.
export function absolutePath(value: string, { cwd }: CompileContext): string {
  return path.resolve(cwd, value);
}

// A root given, or `dir` under FLEET_HOME.
export function rootUnderHome(dir: string): (value: string | null, ctx: CompileContext) => string {
  return (value, { cwd, parsed }) => path.resolve(cwd, value ?? path.join(path.resolve(cwd, parsed.FLEET_HOME), dir));
}
