/**
 * `FLEET_API_TOKENS` entries: `<secret>` (every route, every workspace) or
 * `<secret>;scope=app|operator;workspaces=<pattern>` (both options optional, in that order).
 * `scope=app` allows the app routes only (workspaces, files, exec, jobs), `scope=operator` the
 * operator routes only (bake, gc, backfill); `workspaces=team-a-*` limits a token to the
 * workspace ids the pattern matches (`*` = any run of id characters) and keeps it off every
 * route that names no workspace.
 */
export type TokenScope = 'all' | 'app' | 'operator';

export interface ApiToken {
  readonly secret: string;
  readonly scope: TokenScope;
  /** Workspace id pattern (glob with `*`); null = every workspace. */
  readonly workspaces: string | null;
}

/** One entry's shape: a secret of ≥ 16 characters without `;` or spaces, then the options. */
export const API_TOKEN_PATTERN = /^[^;\s,]{16,}(?:;scope=(?:all|app|operator))?(?:;workspaces=[A-Za-z0-9_*-]{1,128})?$/;

export function parseApiToken(entry: string): ApiToken {
  const [secret, ...options] = entry.split(';');
  const values = new Map(options.map((option) => option.split('=') as [string, string]));
  return Object.freeze({ secret: secret!, scope: (values.get('scope') as TokenScope | undefined) ?? 'all', workspaces: values.get('workspaces') ?? null });
}

/** Whether a token's workspace pattern admits `workspaceId`. */
export function tokenAllows(token: Pick<ApiToken, 'workspaces'>, workspaceId: string): boolean {
  if (token.workspaces === null) return true;
  const pattern = new RegExp(`^${token.workspaces.replace(/\*/g, '[A-Za-z0-9_-]*')}$`);
  return pattern.test(workspaceId);
}
