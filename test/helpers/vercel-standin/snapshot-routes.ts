// /v2/sandboxes/snapshots…: get, delete, list. Reference §6, §8.
import { rm } from 'node:fs/promises';
import type { Handler, HandlerContext } from './standin-context.js';
import { ApiFailure, sendJson } from './standin-http.js';
import { expireSnapshot, snapshotJson, type StandinSnapshot } from './standin-state.js';

function findSnapshot(ctx: HandlerContext): StandinSnapshot {
  const snapshot = ctx.state.snapshots.get(ctx.params.id!);
  if (!snapshot) throw new ApiFailure(404, 'not_found', `Snapshot ${ctx.params.id} not found`);
  expireSnapshot(snapshot);
  return snapshot;
}

/** GET /v2/sandboxes/snapshots/{id} */
export const getSnapshot: Handler = async (ctx) => {
  sendJson(ctx.res, 200, { snapshot: snapshotJson(findSnapshot(ctx)) });
};

/** DELETE /v2/sandboxes/snapshots/{id} */
export const deleteSnapshot: Handler = async (ctx) => {
  const snapshot = findSnapshot(ctx);
  await snapshot.ready;
  snapshot.status = 'deleted';
  snapshot.updatedAt = Date.now();
  await rm(snapshot.dir, { recursive: true, force: true });
  ctx.hooks.emit('snapshot-deleted', { snapshotId: snapshot.id });
  sendJson(ctx.res, 200, { snapshot: snapshotJson(snapshot) });
};

/** GET /v2/sandboxes/snapshots?project=&name=&limit=&cursor=&sortOrder= */
export const listSnapshots: Handler = async (ctx) => {
  const query = ctx.url.searchParams;
  if (query.get('project') !== ctx.config.projectId) throw new ApiFailure(403, 'forbidden', 'You do not have access to this project');
  const name = query.get('name');
  const order = query.get('sortOrder') === 'asc' ? 1 : -1;
  const all = [...ctx.state.snapshots.values()]
    .filter((snapshot) => name === null || snapshot.sandboxName === name)
    .sort((a, b) => order * (a.createdAt - b.createdAt));
  all.forEach((snapshot) => expireSnapshot(snapshot));
  const limit = Math.min(Number(query.get('limit') ?? ctx.config.pageSize) || ctx.config.pageSize, ctx.config.pageSize);
  const offset = Number(query.get('cursor') ?? 0) || 0;
  const page = all.slice(offset, offset + limit);
  sendJson(ctx.res, 200, { snapshots: page.map(snapshotJson), pagination: { count: page.length, next: offset + limit < all.length ? String(offset + limit) : null } });
};
