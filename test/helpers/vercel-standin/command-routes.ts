// /v2/sandboxes/sessions/{sid}/cmd…: run (sync NDJSON or detached JSON), get (with wait=true),
// logs (NDJSON), kill. Commands really run on the host with cwd inside the sandbox's directory.
import type { Handler, HandlerContext } from './standin-context.js';
import { commandJson, startCommand, type StandinCommand } from './standin-command.js';
import { hostPath } from './standin-fs.js';
import { ApiFailure, readJson, sendJson } from './standin-http.js';
import { liveSession } from './standin-lifecycle.js';
import { streamCommand } from './standin-ndjson.js';
import { SANDBOX_CWD, type StandinSession } from './standin-state.js';
import { stat } from 'node:fs/promises';

function findCommand(ctx: HandlerContext): { session: StandinSession; command: StandinCommand } {
  const session = ctx.state.sessions.get(ctx.params.sid!);
  const command = session?.commands.get(ctx.params.cid!);
  if (!session || !command) throw new ApiFailure(404, 'not_found', `Command ${ctx.params.cid} not found`);
  return { session, command };
}

/** POST …/cmd {command, args, cwd?, env, sudo, wait?, logs?, timeout?} */
export const runCommand: Handler = async (ctx) => {
  const { sandbox, session } = liveSession(ctx, ctx.params.sid!);
  const body = await readJson(ctx.req);
  if (typeof body.command !== 'string' || body.command === '') throw new ApiFailure(400, 'bad_request', 'command is required');
  const args = Array.isArray(body.args) ? body.args.map(String) : [];
  const cwd = typeof body.cwd === 'string' ? body.cwd : SANDBOX_CWD;
  const hostCwd = hostPath(sandbox.root, cwd);
  const cwdStat = await stat(hostCwd).catch(() => null);
  if (!cwdStat?.isDirectory()) throw new ApiFailure(400, 'bad_request', `cwd ${cwd} is not a directory`);
  const command = startCommand({
    sessionId: session.id,
    cmd: body.command,
    args,
    cwd,
    hostCwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8', HOME: hostPath(sandbox.root, SANDBOX_CWD), ...sandbox.env, ...((body.env as Record<string, string>) ?? {}) },
    ...(typeof body.timeout === 'number' ? { timeoutMs: body.timeout } : {}),
  });
  session.commands.set(command.id, command);
  ctx.hooks.emit('command', { sessionId: session.id, commandId: command.id, cmd: body.command, args });
  if (body.wait === true) streamCommand(ctx.res, command, true);
  else sendJson(ctx.res, 200, { command: commandJson(command) });
};

/** GET …/cmd/{cid}[?wait=true]: with wait, headers go out at once and the JSON when it exits. */
export const getCommand: Handler = async (ctx) => {
  const { command } = findCommand(ctx);
  if (ctx.url.searchParams.get('wait') !== 'true') {
    sendJson(ctx.res, 200, { command: commandJson(command) });
    return;
  }
  ctx.res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
  ctx.res.flushHeaders();
  await command.done;
  ctx.res.end(JSON.stringify({ command: commandJson(command) }));
};

/** GET …/cmd/{cid}/logs (NDJSON of log lines; ends when the command does). */
export const commandLogs: Handler = async (ctx) => {
  const { command } = findCommand(ctx);
  streamCommand(ctx.res, command, false);
};

/** POST …/cmd/{cid}/kill {signal} */
export const killCommand: Handler = async (ctx) => {
  liveSession(ctx, ctx.params.sid!);
  const { command } = findCommand(ctx);
  const body = await readJson(ctx.req);
  if (typeof body.signal !== 'number') throw new ApiFailure(400, 'bad_request', 'signal must be a number');
  command.kill(body.signal);
  ctx.hooks.emit('kill', { commandId: command.id, signal: body.signal });
  sendJson(ctx.res, 200, { command: commandJson(command) });
};
