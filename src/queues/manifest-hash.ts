/**
 * The manifest hash covers every input that changes a base image: schema version, runtime,
 * packages, setup commands, template files (path, mode, content), setup env, marker, smoke
 * checks, the overlay and migration commands (when there are any) and the fleet's own version. Labels (`name`, `lane`) are not part of it.
 */
import { createHash } from 'node:crypto';
import { FLEET_VERSION } from '../version.js';
import type { BaseManifest } from './base-manifest.js';

// JSON with object keys sorted at every level, so equal inputs hash equally.
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** sha256 hex of the image inputs of a manifest. */
export function manifestHash(manifest: BaseManifest, fleetVersion = FLEET_VERSION): string {
  const inputs = {
    schemaVersion: manifest.schemaVersion,
    runtime: manifest.runtime,
    packages: manifest.packages,
    setup: manifest.setup,
    files: manifest.files.map((f) => ({ path: f.path, mode: f.mode, sha256: createHash('sha256').update(f.content).digest('hex') })),
    env: manifest.env,
    envAllowlist: manifest.envAllowlist,
    marker: manifest.marker,
    smoke: manifest.smoke,
    // Only when there is one, so the hashes of manifests without an overlay stay what they were.
    overlay: manifest.overlay.length > 0 ? manifest.overlay.map((f) => ({ path: f.path, mode: f.mode, sha256: createHash('sha256').update(f.content).digest('hex') })) : undefined,
    migrate: manifest.migrate.length > 0 ? manifest.migrate : undefined,
    fleetVersion,
  };
  return createHash('sha256').update(canonicalJson(inputs)).digest('hex');
}

/** Human label plus hash prefix, e.g. `node-base-3f2a9c1d04be`. */
export function manifestVersion(manifest: BaseManifest, hash = manifestHash(manifest)): string {
  return `${manifest.name}-${hash.slice(0, 12)}`;
}
