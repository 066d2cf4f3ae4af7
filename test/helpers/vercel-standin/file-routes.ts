// /v2/sandboxes/sessions/{sid}/fs/…: write (gzip tar, entries relative to `x-cwd`), read (raw
// bytes, 404 when absent), mkdir (one level). Reference §4, §8.
import { createReadStream } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import type { Handler } from './standin-context.js';
import { extractUpload, hostPath } from './standin-fs.js';
import { ApiFailure, readBody, readJson, sendJson } from './standin-http.js';
import { liveSession } from './standin-lifecycle.js';
import { SANDBOX_CWD } from './standin-state.js';

/** POST …/fs/write (content-type application/gzip, x-cwd: extract dir) */
export const writeFiles: Handler = async (ctx) => {
  const { sandbox } = liveSession(ctx, ctx.params.sid!);
  if (ctx.req.headers['content-type'] !== 'application/gzip') throw new ApiFailure(400, 'bad_request', 'expected content-type application/gzip');
  const extractDir = String(ctx.req.headers['x-cwd'] ?? '/');
  const body = await readBody(ctx.req);
  await extractUpload(body, hostPath(sandbox.root, extractDir));
  ctx.hooks.emit('write', { sandboxName: sandbox.name, bytes: body.length });
  sendJson(ctx.res, 200, {});
};

/** POST …/fs/read {path, cwd?} */
export const readFile: Handler = async (ctx) => {
  const { sandbox } = liveSession(ctx, ctx.params.sid!);
  const body = await readJson(ctx.req);
  if (typeof body.path !== 'string') throw new ApiFailure(400, 'bad_request', 'path is required');
  const file = hostPath(sandbox.root, body.path, typeof body.cwd === 'string' ? body.cwd : SANDBOX_CWD);
  const info = await stat(file).catch(() => null);
  if (!info?.isFile()) throw new ApiFailure(404, 'file_not_found', `File ${body.path} not found`);
  ctx.res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': info.size });
  createReadStream(file).pipe(ctx.res);
};

/** POST …/fs/mkdir {path, cwd?} */
export const makeDirectory: Handler = async (ctx) => {
  const { sandbox } = liveSession(ctx, ctx.params.sid!);
  const body = await readJson(ctx.req);
  if (typeof body.path !== 'string') throw new ApiFailure(400, 'bad_request', 'path is required');
  try {
    await mkdir(hostPath(sandbox.root, body.path, typeof body.cwd === 'string' ? body.cwd : SANDBOX_CWD));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw new ApiFailure(400, 'file_exists', `${body.path} already exists`);
    if (code === 'ENOENT') throw new ApiFailure(404, 'file_not_found', `parent of ${body.path} not found`);
    throw error;
  }
  sendJson(ctx.res, 200, {});
};
