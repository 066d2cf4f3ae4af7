// /v2|v3/sandboxes…: create (POST /v3 without runtime, POST /v2 with it), get (with `resume`),
// list (paginated), delete. Reference §1, §2, §8.
import path from 'node:path';
import { rm } from 'node:fs/promises';
import type { Handler, HandlerContext } from './standin-context.js';
import { ApiFailure, readJson, sendJson } from './standin-http.js';
import { endSession, resetFilesystem, resumeSandbox } from './standin-lifecycle.js';
import {
  DEFAULT_TIMEOUT_MS,
  expireSnapshot,
  newSession,
  routesJson,
  sandboxJson,
  sessionJson,
  type StandinSandbox,
} from './standin-state.js';

const NAME = /^[a-zA-Z0-9_-]{1,128}$/;
const DEFAULT_IMAGE = 'vercel/sandbox/universal:latest';

function requireProject(ctx: HandlerContext, projectId: unknown): void {
  if (projectId !== ctx.config.projectId) throw new ApiFailure(403, 'forbidden', 'You do not have access to this project');
}

function findSandbox(ctx: HandlerContext): StandinSandbox {
  const sandbox = ctx.state.sandboxes.get(ctx.params.name!);
  if (!sandbox) throw new ApiFailure(404, 'not_found', `Sandbox ${ctx.params.name} not found`);
  return sandbox;
}

function sandboxAndSession(sandbox: StandinSandbox, extra: Record<string, unknown> = {}) {
  return { sandbox: sandboxJson(sandbox), session: sessionJson(sandbox.session), routes: routesJson(sandbox), ...extra };
}

/** POST /v3/sandboxes (image) and POST /v2/sandboxes (runtime). */
export const createSandbox: Handler = async (ctx) => {
  const body = await readJson(ctx.req);
  requireProject(ctx, body.projectId);
  const v2 = ctx.url.pathname.endsWith('/v2/sandboxes');
  if (v2 && typeof body.runtime !== 'string') throw new ApiFailure(400, 'bad_request', 'runtime is required on /v2/sandboxes');
  const name = body.name === undefined ? `sandbox-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}` : body.name;
  if (typeof name !== 'string' || !NAME.test(name)) throw new ApiFailure(400, 'bad_request', 'name must match ^[a-zA-Z0-9_-]+$ and be at most 128 characters');
  if (ctx.state.sandboxes.has(name)) throw new ApiFailure(409, 'conflict', `A sandbox named ${name} already exists`);
  const source = body.source as { type?: unknown; snapshotId?: unknown } | undefined;
  let sourceSnapshotId: string | undefined;
  if (source !== undefined) {
    if (source.type !== 'snapshot' || typeof source.snapshotId !== 'string') throw new ApiFailure(400, 'bad_request', 'the stand-in supports only snapshot sources');
    const snapshot = ctx.state.snapshots.get(source.snapshotId);
    if (snapshot) expireSnapshot(snapshot);
    if (!snapshot || snapshot.status !== 'created') throw new ApiFailure(404, 'snapshot_not_found', `Snapshot ${source.snapshotId} not found`);
    await snapshot.ready;
    const now = Date.now();
    snapshot.lastUsedAt = now;
    // Expiry counts from the last use [docs].
    if (snapshot.expiration > 0) snapshot.expiresAt = now + snapshot.expiration;
    sourceSnapshotId = snapshot.id;
  }
  const timeout = typeof body.timeout === 'number' ? body.timeout : DEFAULT_TIMEOUT_MS;
  const now = Date.now();
  const session = newSession(name, timeout, sourceSnapshotId);
  const sandbox: StandinSandbox = {
    name,
    persistent: body.persistent === undefined ? true : body.persistent === true,
    createdAt: now,
    updatedAt: now,
    timeout,
    ...(v2 ? { runtime: body.runtime as string } : { image: typeof body.image === 'string' ? body.image : DEFAULT_IMAGE }),
    ...(body.tags ? { tags: body.tags as Record<string, string> } : {}),
    env: (body.env as Record<string, string> | undefined) ?? {},
    ...(typeof body.snapshotExpiration === 'number' ? { snapshotExpiration: body.snapshotExpiration } : {}),
    ...(sourceSnapshotId ? { sourceSnapshotId } : {}),
    session,
    ports: Array.isArray(body.ports) ? (body.ports as number[]) : [],
    // A directory per incarnation, as every Vercel sandbox is its own VM: a name deleted and
    // created again must not share a disk with host-side work still finishing for the old one
    // (an upload being extracted, a delete's rm -rf), which would tear the new one's tree.
    root: path.join(ctx.config.dataDir, 'sandboxes', `${name}.${++ctx.state.incarnations}`),
  };
  ctx.state.sandboxes.set(name, sandbox);
  ctx.state.sessions.set(session.id, session);
  await resetFilesystem(ctx, sandbox);
  ctx.hooks.emit('create', { sandboxName: name, path: ctx.url.pathname });
  sendJson(ctx.res, 200, sandboxAndSession(sandbox));
};

/** GET /v2/sandboxes/{name}?projectId=&resume= */
export const getSandbox: Handler = async (ctx) => {
  requireProject(ctx, ctx.url.searchParams.get('projectId'));
  const sandbox = findSandbox(ctx);
  const resumed = ctx.url.searchParams.get('resume') === 'true' ? await resumeSandbox(ctx, sandbox) : false;
  sendJson(ctx.res, 200, sandboxAndSession(sandbox, resumed ? { resumed: true } : {}));
};

/** GET /v2/sandboxes?project=&limit=&namePrefix=&cursor=&sortBy=&sortOrder=&tags=k:v */
export const listSandboxes: Handler = async (ctx) => {
  const query = ctx.url.searchParams;
  requireProject(ctx, query.get('project'));
  const prefix = query.get('namePrefix') ?? '';
  const tag = query.get('tags');
  const [tagKey, tagValue] = tag === null ? [] : [tag.slice(0, tag.indexOf(':')), tag.slice(tag.indexOf(':') + 1)];
  const sortBy = (query.get('sortBy') ?? 'createdAt') as 'createdAt' | 'name' | 'statusUpdatedAt';
  const order = query.get('sortOrder') === 'asc' ? 1 : -1;
  const all = [...ctx.state.sandboxes.values()]
    .filter((sandbox) => sandbox.name.startsWith(prefix))
    .filter((sandbox) => tagKey === undefined || sandbox.tags?.[tagKey] === tagValue)
    .sort((a, b) => order * (sortBy === 'name' ? a.name.localeCompare(b.name) : sortBy === 'statusUpdatedAt' ? a.session.updatedAt - b.session.updatedAt : a.createdAt - b.createdAt || a.name.localeCompare(b.name)));
  const limit = Math.min(Number(query.get('limit') ?? ctx.config.pageSize) || ctx.config.pageSize, ctx.config.pageSize);
  const offset = Number(query.get('cursor') ?? 0) || 0;
  const page = all.slice(offset, offset + limit);
  const next = offset + limit < all.length ? String(offset + limit) : null;
  sendJson(ctx.res, 200, { sandboxes: page.map(sandboxJson), pagination: { count: page.length, next } });
};

/** DELETE /v2/sandboxes/{name}?projectId=&deleteOrphanSnapshots= */
export const deleteSandbox: Handler = async (ctx) => {
  requireProject(ctx, ctx.url.searchParams.get('projectId'));
  const sandbox = findSandbox(ctx);
  if (sandbox.session.status === 'running') endSession(sandbox.session);
  ctx.state.sandboxes.delete(sandbox.name);
  await rm(sandbox.root, { recursive: true, force: true });
  if (ctx.url.searchParams.get('deleteOrphanSnapshots') === 'true') {
    for (const snapshot of ctx.state.snapshots.values()) {
      if (snapshot.sandboxName === sandbox.name && snapshot.status === 'created') snapshot.status = 'deleted';
    }
  }
  ctx.hooks.emit('delete', { sandboxName: sandbox.name });
  sendJson(ctx.res, 200, { sandbox: { ...sandboxJson(sandbox), status: 'stopped' }, routes: [] });
};
