// /v2/sandboxes/sessions/{sid}…: get, stop, extend-timeout, snapshot. Reference §5, §6, §8.
import type { Handler } from './standin-context.js';
import { ApiFailure, readJson, sendJson } from './standin-http.js';
import { endSession, liveSession, stopSandbox, takeSnapshot } from './standin-lifecycle.js';
import { routesJson, sandboxJson, sessionJson, snapshotJson } from './standin-state.js';

/** GET /v2/sandboxes/sessions/{sid} */
export const getSession: Handler = async (ctx) => {
  const session = ctx.state.sessions.get(ctx.params.sid!);
  if (!session) throw new ApiFailure(404, 'not_found', `Session ${ctx.params.sid} not found`);
  const sandbox = ctx.state.sandboxes.get(session.sandboxName);
  sendJson(ctx.res, 200, { session: sessionJson(session), routes: sandbox ? routesJson(sandbox) : [] });
};

/** POST /v2/sandboxes/sessions/{sid}/stop: blocks until stopped; idempotent on a stopped session. */
export const stopSession: Handler = async (ctx) => {
  const session = ctx.state.sessions.get(ctx.params.sid!);
  if (!session) throw new ApiFailure(404, 'not_found', `Session ${ctx.params.sid} not found`);
  if (session.snapshotting) await session.snapshotting;
  const sandbox = ctx.state.sandboxes.get(session.sandboxName);
  const snapshot = sandbox && sandbox.session === session ? await stopSandbox(ctx, sandbox) : undefined;
  sendJson(ctx.res, 200, {
    session: sessionJson(session),
    ...(sandbox ? { sandbox: sandboxJson(sandbox) } : {}),
    ...(snapshot ? { snapshot: snapshotJson(snapshot) } : {}),
  });
};

/** POST /v2/sandboxes/sessions/{sid}/extend-timeout {duration} */
export const extendTimeout: Handler = async (ctx) => {
  const { session } = liveSession(ctx, ctx.params.sid!);
  const body = await readJson(ctx.req);
  if (typeof body.duration !== 'number' || body.duration <= 0) throw new ApiFailure(400, 'bad_request', 'duration must be a positive number');
  session.timeout += body.duration;
  session.updatedAt = Date.now();
  sendJson(ctx.res, 200, { session: sessionJson(session) });
};

/**
 * POST /v2/sandboxes/sessions/{sid}/snapshot [{expiration}]: stops the session. The answer comes
 * at once with the session `snapshotting`; it turns `stopped` when the copy is done.
 */
export const snapshotSession: Handler = async (ctx) => {
  const { sandbox, session } = liveSession(ctx, ctx.params.sid!);
  const body = await readJson(ctx.req);
  if (body.expiration !== undefined && (typeof body.expiration !== 'number' || body.expiration < 0)) {
    throw new ApiFailure(400, 'bad_request', 'expiration must be a non-negative number of milliseconds');
  }
  endSession(session, 'snapshotting');
  const snapshot = takeSnapshot(ctx, sandbox, 'manual', body.expiration as number | undefined);
  session.snapshottedAt = Date.now();
  session.snapshotting = snapshot.ready.then(() => {
    session.status = 'stopped';
    session.updatedAt = Date.now();
    if (snapshot.status === 'created') sandbox.currentSnapshotId = snapshot.id;
    session.snapshotting = undefined;
  });
  sendJson(ctx.res, 200, { snapshot: snapshotJson(snapshot), session: sessionJson(session) });
};
