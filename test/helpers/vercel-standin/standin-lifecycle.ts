// Session transitions shared by the routes: stop (with the persistent auto-snapshot), resume,
// snapshot, and the 410/422 answers for calls on sessions that are not running.
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { HandlerContext, LifecycleContext } from './standin-context.js';
import { copyTree, treeSize } from './standin-fs.js';
import { ApiFailure } from './standin-http.js';
import {
  DEFAULT_SNAPSHOT_EXPIRATION_MS,
  SANDBOX_CWD,
  newId,
  newSession,
  type StandinSandbox,
  type StandinSession,
  type StandinSnapshot,
} from './standin-state.js';

/** The running session `sid` and its sandbox, or the error the real API gives for it. */
export function liveSession(ctx: HandlerContext, sid: string): { sandbox: StandinSandbox; session: StandinSession } {
  const session = ctx.state.sessions.get(sid);
  if (!session) throw new ApiFailure(404, 'not_found', `Session ${sid} not found`);
  if (session.status === 'snapshotting') throw new ApiFailure(422, 'sandbox_snapshotting', 'The sandbox is being snapshotted');
  if (session.status === 'stopping') throw new ApiFailure(422, 'sandbox_stopping', 'The sandbox is stopping');
  const sandbox = ctx.state.sandboxes.get(session.sandboxName);
  if (session.status !== 'running' || !sandbox || sandbox.session !== session) throw new ApiFailure(410, 'sandbox_stopped', 'The sandbox session has stopped');
  return { sandbox, session };
}

/** Kills the session's commands (their streams end with an error line) and marks it stopped. */
export function endSession(session: StandinSession, status: 'stopped' | 'stopping' | 'snapshotting' = 'stopped'): void {
  for (const command of session.commands.values()) {
    if (command.exitCode === null) {
      command.interruptedBy = 'sandbox_stopped';
      command.kill('SIGKILL');
    }
  }
  const now = Date.now();
  session.status = status;
  session.updatedAt = now;
  session.stoppedAt = now;
}

/** Records a snapshot of the sandbox's filesystem and copies it (after the test gate opens). */
export function takeSnapshot(ctx: LifecycleContext, sandbox: StandinSandbox, method: 'manual' | 'auto', expiration?: number): StandinSnapshot {
  const now = Date.now();
  const asked = expiration ?? sandbox.snapshotExpiration ?? DEFAULT_SNAPSHOT_EXPIRATION_MS;
  const cap = ctx.state.snapshotExpiryCapMs;
  const ms = cap > 0 && (asked === 0 || asked > cap) ? cap : asked;
  const id = newId('snap');
  const snapshot: StandinSnapshot = {
    id,
    sourceSessionId: sandbox.session.id,
    sandboxName: sandbox.name,
    status: 'created',
    sizeBytes: 0,
    createdAt: now,
    updatedAt: now,
    expiration: ms,
    ...(ms === 0 ? {} : { expiresAt: now + ms }),
    creationMethod: method,
    dir: path.join(ctx.config.dataDir, 'snapshots', id),
    ready: Promise.resolve(),
  };
  snapshot.ready = (async () => {
    await copyTree(sandbox.root, snapshot.dir);
    snapshot.sizeBytes = await treeSize(snapshot.dir);
    if (method === 'manual') await ctx.hooks.snapshotGate();
  })().catch(() => {
    snapshot.status = 'failed';
  });
  ctx.state.snapshots.set(id, snapshot);
  ctx.hooks.emit('snapshot', { snapshotId: id, sandboxName: sandbox.name, method });
  return snapshot;
}

/** Stops the current session; a persistent sandbox keeps its files and records an auto-snapshot. */
export async function stopSandbox(ctx: LifecycleContext, sandbox: StandinSandbox): Promise<StandinSnapshot | undefined> {
  if (sandbox.session.status !== 'running') return undefined;
  endSession(sandbox.session, 'stopping');
  let snapshot: StandinSnapshot | undefined;
  if (sandbox.persistent) {
    snapshot = takeSnapshot(ctx, sandbox, 'auto');
    await snapshot.ready;
    sandbox.currentSnapshotId = snapshot.id;
  }
  sandbox.session.status = 'stopped';
  sandbox.session.updatedAt = Date.now();
  sandbox.updatedAt = Date.now();
  return snapshot;
}

/**
 * Starts a new session of a stopped sandbox. Persistent sandboxes keep their filesystem (the
 * auto-snapshot); non-persistent ones start again from their creation source.
 */
export async function resumeSandbox(ctx: LifecycleContext, sandbox: StandinSandbox): Promise<boolean> {
  if (sandbox.session.snapshotting) await sandbox.session.snapshotting;
  if (sandbox.session.status === 'running' || sandbox.session.status === 'pending') return false;
  if (!sandbox.persistent) await resetFilesystem(ctx, sandbox);
  const session = newSession(sandbox.name, sandbox.timeout, sandbox.persistent ? sandbox.currentSnapshotId : sandbox.sourceSnapshotId);
  sandbox.session = session;
  sandbox.updatedAt = Date.now();
  ctx.state.sessions.set(session.id, session);
  ctx.hooks.emit('resume', { sandboxName: sandbox.name, sessionId: session.id });
  return true;
}

/** Fills a sandbox's root from its source snapshot (or leaves just the cwd). */
export async function resetFilesystem(ctx: LifecycleContext, sandbox: StandinSandbox): Promise<void> {
  await rm(sandbox.root, { recursive: true, force: true });
  if (sandbox.sourceSnapshotId) {
    const source = ctx.state.snapshots.get(sandbox.sourceSnapshotId);
    if (!source || source.status !== 'created') throw new ApiFailure(410, 'snapshot_not_found', 'Cannot resume sandbox: no snapshot available.');
    await copyTree(source.dir, sandbox.root);
  }
  await mkdir(path.join(sandbox.root, SANDBOX_CWD), { recursive: true });
}
