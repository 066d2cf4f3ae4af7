// The route table: method + path pattern → route name (used by fault injection) → handler.
import { commandLogs, getCommand, killCommand, runCommand } from './command-routes.js';
import { makeDirectory, readFile, writeFiles } from './file-routes.js';
import { createSandbox, deleteSandbox, getSandbox, listSandboxes } from './sandbox-routes.js';
import { extendTimeout, getSession, snapshotSession, stopSession } from './session-routes.js';
import { deleteSnapshot, getSnapshot, listSnapshots } from './snapshot-routes.js';
import type { Handler } from './standin-context.js';

export type RouteName =
  | 'createSandbox'
  | 'getSandbox'
  | 'listSandboxes'
  | 'deleteSandbox'
  | 'getSession'
  | 'stopSession'
  | 'extendTimeout'
  | 'snapshotSession'
  | 'runCommand'
  | 'getCommand'
  | 'commandLogs'
  | 'killCommand'
  | 'writeFiles'
  | 'readFile'
  | 'makeDirectory'
  | 'getSnapshot'
  | 'deleteSnapshot'
  | 'listSnapshots';

interface Route {
  readonly name: RouteName;
  readonly method: string;
  readonly pattern: RegExp;
  readonly handler: Handler;
}

const SESSION = '/v2/sandboxes/sessions/(?<sid>[^/]+)';

// Order matters: the fixed `sessions` and `snapshots` segments before `{name}`.
const ROUTES: readonly Route[] = [
  { name: 'createSandbox', method: 'POST', pattern: /^\/v3\/sandboxes$/, handler: createSandbox },
  { name: 'createSandbox', method: 'POST', pattern: /^\/v2\/sandboxes$/, handler: createSandbox },
  { name: 'listSandboxes', method: 'GET', pattern: /^\/v2\/sandboxes$/, handler: listSandboxes },
  { name: 'listSnapshots', method: 'GET', pattern: /^\/v2\/sandboxes\/snapshots$/, handler: listSnapshots },
  { name: 'getSnapshot', method: 'GET', pattern: /^\/v2\/sandboxes\/snapshots\/(?<id>[^/]+)$/, handler: getSnapshot },
  { name: 'deleteSnapshot', method: 'DELETE', pattern: /^\/v2\/sandboxes\/snapshots\/(?<id>[^/]+)$/, handler: deleteSnapshot },
  { name: 'runCommand', method: 'POST', pattern: new RegExp(`^${SESSION}/cmd$`), handler: runCommand },
  { name: 'commandLogs', method: 'GET', pattern: new RegExp(`^${SESSION}/cmd/(?<cid>[^/]+)/logs$`), handler: commandLogs },
  { name: 'killCommand', method: 'POST', pattern: new RegExp(`^${SESSION}/cmd/(?<cid>[^/]+)/kill$`), handler: killCommand },
  { name: 'getCommand', method: 'GET', pattern: new RegExp(`^${SESSION}/cmd/(?<cid>[^/]+)$`), handler: getCommand },
  { name: 'writeFiles', method: 'POST', pattern: new RegExp(`^${SESSION}/fs/write$`), handler: writeFiles },
  { name: 'readFile', method: 'POST', pattern: new RegExp(`^${SESSION}/fs/read$`), handler: readFile },
  { name: 'makeDirectory', method: 'POST', pattern: new RegExp(`^${SESSION}/fs/mkdir$`), handler: makeDirectory },
  { name: 'stopSession', method: 'POST', pattern: new RegExp(`^${SESSION}/stop$`), handler: stopSession },
  { name: 'extendTimeout', method: 'POST', pattern: new RegExp(`^${SESSION}/extend-timeout$`), handler: extendTimeout },
  { name: 'snapshotSession', method: 'POST', pattern: new RegExp(`^${SESSION}/snapshot$`), handler: snapshotSession },
  { name: 'getSession', method: 'GET', pattern: new RegExp(`^${SESSION}$`), handler: getSession },
  { name: 'getSandbox', method: 'GET', pattern: /^\/v2\/sandboxes\/(?<name>[^/]+)$/, handler: getSandbox },
  { name: 'deleteSandbox', method: 'DELETE', pattern: /^\/v2\/sandboxes\/(?<name>[^/]+)$/, handler: deleteSandbox },
];

/** The route of a request, with its decoded path parameters; `null` when none matches. */
export function matchRoute(method: string, pathname: string): { route: Route; params: Record<string, string> } | null {
  // The stand-in also answers under `/api`, so a base URL ending in /api works too.
  const path = pathname.startsWith('/api/') ? pathname.slice(4) : pathname;
  for (const route of ROUTES) {
    if (route.method !== method) continue;
    const match = route.pattern.exec(path);
    if (!match) continue;
    const params: Record<string, string> = {};
    for (const [key, value] of Object.entries(match.groups ?? {})) params[key] = decodeURIComponent(value);
    return { route, params };
  }
  return null;
}
