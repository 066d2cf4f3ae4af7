// In-memory state of the Vercel stand-in and the JSON shapes the SDK's zod validators expect
// (reference §8 "Required response fields").
import { randomBytes } from 'node:crypto';
import type { StandinCommand } from './standin-command.js';

export type SessionStatus = 'pending' | 'running' | 'stopping' | 'stopped' | 'failed' | 'aborted' | 'snapshotting';

export const SANDBOX_CWD = '/vercel/sandbox';
export const DEFAULT_TIMEOUT_MS = 300_000;
// Server default snapshot expiry [docs]: 30 days.
export const DEFAULT_SNAPSHOT_EXPIRATION_MS = 30 * 24 * 3_600_000;
const REGION = 'iad1';

export interface StandinSession {
  readonly id: string;
  readonly sandboxName: string;
  status: SessionStatus;
  readonly requestedAt: number;
  readonly createdAt: number;
  startedAt: number;
  updatedAt: number;
  stoppedAt?: number;
  snapshottedAt?: number;
  timeout: number;
  readonly sourceSnapshotId?: string;
  readonly commands: Map<string, StandinCommand>;
  /** Settles when a snapshot of this session has been copied. */
  snapshotting?: Promise<void>;
}

export interface StandinSandbox {
  readonly name: string;
  readonly persistent: boolean;
  /** Mutable so a test can age a sandbox (`VercelStandin.backdate`) instead of waiting. */
  createdAt: number;
  updatedAt: number;
  readonly timeout: number;
  readonly runtime?: string;
  readonly image?: string;
  readonly tags?: Record<string, string>;
  readonly env: Record<string, string>;
  readonly snapshotExpiration?: number;
  /** The snapshot the sandbox was created from (non-persistent sessions restart from it). */
  readonly sourceSnapshotId?: string;
  currentSnapshotId?: string;
  session: StandinSession;
  readonly ports: number[];
  /** Host directory standing for the sandbox's `/`. */
  readonly root: string;
}

export interface StandinSnapshot {
  readonly id: string;
  readonly sourceSessionId: string;
  readonly sandboxName: string;
  status: 'created' | 'deleted' | 'failed';
  sizeBytes: number;
  readonly createdAt: number;
  updatedAt: number;
  /** ms; 0 = never expires. */
  readonly expiration: number;
  expiresAt?: number;
  lastUsedAt?: number;
  readonly creationMethod: 'manual' | 'auto';
  /** Host directory holding the copied filesystem. */
  readonly dir: string;
  /** Settles when the copy is complete. */
  ready: Promise<void>;
}

export interface StandinState {
  readonly sandboxes: Map<string, StandinSandbox>;
  readonly sessions: Map<string, StandinSession>;
  readonly snapshots: Map<string, StandinSnapshot>;
  /**
   * A server policy tests can set: no snapshot expires later than this many ms after it is
   * taken, whatever was asked (`expiration: 0` included). 0 = no policy (the API as documented).
   */
  snapshotExpiryCapMs: number;
  /** Sandboxes created so far (names each one's own host directory). */
  incarnations: number;
}

export function createState(): StandinState {
  return { sandboxes: new Map(), sessions: new Map(), snapshots: new Map(), snapshotExpiryCapMs: 0, incarnations: 0 };
}

/** Ids shaped like the real ones: `sbx_…`, `snap_…`, `cmd_…`. */
export function newId(prefix: 'sbx' | 'snap' | 'cmd'): string {
  return `${prefix}_${randomBytes(12).toString('hex')}`;
}

/** A fresh running session of `sandbox`. */
export function newSession(sandboxName: string, timeout: number, sourceSnapshotId?: string): StandinSession {
  const now = Date.now();
  return {
    id: newId('sbx'),
    sandboxName,
    status: 'running',
    requestedAt: now,
    createdAt: now,
    startedAt: now,
    updatedAt: now,
    timeout,
    ...(sourceSnapshotId ? { sourceSnapshotId } : {}),
    commands: new Map(),
  };
}

export function sessionJson(session: StandinSession): Record<string, unknown> {
  return {
    id: session.id,
    memory: 2048 * 2,
    vcpus: 2,
    region: REGION,
    timeout: session.timeout,
    status: session.status,
    requestedAt: session.requestedAt,
    startedAt: session.startedAt,
    stoppedAt: session.stoppedAt,
    snapshottedAt: session.snapshottedAt,
    createdAt: session.createdAt,
    updatedAt: session.updatedAt,
    cwd: SANDBOX_CWD,
    sourceSnapshotId: session.sourceSnapshotId,
    networkPolicy: { mode: 'allow-all' },
  };
}

export function sandboxJson(sandbox: StandinSandbox): Record<string, unknown> {
  return {
    name: sandbox.name,
    persistent: sandbox.persistent,
    region: REGION,
    vcpus: 2,
    memory: 4096,
    runtime: sandbox.runtime,
    image: sandbox.image,
    timeout: sandbox.timeout,
    createdAt: sandbox.createdAt,
    updatedAt: sandbox.updatedAt,
    currentSessionId: sandbox.session.id,
    currentSnapshotId: sandbox.currentSnapshotId,
    status: sandbox.session.status,
    statusUpdatedAt: sandbox.session.updatedAt,
    cwd: SANDBOX_CWD,
    tags: sandbox.tags,
    snapshotExpiration: sandbox.snapshotExpiration,
    networkPolicy: { mode: 'allow-all' },
  };
}

export function routesJson(sandbox: StandinSandbox): Record<string, unknown>[] {
  return sandbox.ports.map((port) => ({ url: `https://${sandbox.name}-${port}.vercel.run`, subdomain: `${sandbox.name}-${port}`, port }));
}

export function snapshotJson(snapshot: StandinSnapshot): Record<string, unknown> {
  return {
    id: snapshot.id,
    sourceSessionId: snapshot.sourceSessionId,
    region: REGION,
    status: snapshot.status,
    sizeBytes: snapshot.sizeBytes,
    expiresAt: snapshot.expiresAt,
    createdAt: snapshot.createdAt,
    updatedAt: snapshot.updatedAt,
    lastUsedAt: snapshot.lastUsedAt,
    creationMethod: snapshot.creationMethod,
  };
}

/** Marks a snapshot deleted once its expiry has passed (checked lazily on every read). */
export function expireSnapshot(snapshot: StandinSnapshot, now = Date.now()): void {
  if (snapshot.status === 'created' && snapshot.expiresAt !== undefined && snapshot.expiresAt <= now) {
    snapshot.status = 'deleted';
    snapshot.updatedAt = now;
  }
}
