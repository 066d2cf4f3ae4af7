import { describe, expect, it } from 'vitest';
import { API_TOKEN_PATTERN, parseApiToken, tokenAllows } from '../../src/config/api-tokens.js';

describe('FLEET_API_TOKENS entries', () => {
  it('a bare secret has every scope and every workspace; options narrow it', () => {
    expect(parseApiToken('token-aaaaaaaaaaaaaaaa')).toEqual({ secret: 'token-aaaaaaaaaaaaaaaa', scope: 'all', workspaces: null });
    expect(parseApiToken('token-aaaaaaaaaaaaaaaa;scope=app;workspaces=team-a-*')).toEqual({ secret: 'token-aaaaaaaaaaaaaaaa', scope: 'app', workspaces: 'team-a-*' });
    expect(parseApiToken('token-aaaaaaaaaaaaaaaa;workspaces=ws-1')).toMatchObject({ scope: 'all', workspaces: 'ws-1' });
  });

  it('refuses short secrets, unknown options, spaces and patterns outside the id alphabet', () => {
    for (const bad of ['short', 'token-aaaaaaaaaaaaaaaa;scope=root', 'token-aaaaaaaaaaaaaaaa;colour=red', 'token aaaaaaaaaaaaaaaa', 'token-aaaaaaaaaaaaaaaa;workspaces=a.b', 'token-aaaaaaaaaaaaaaaa;workspaces=(.*)']) {
      expect(API_TOKEN_PATTERN.test(bad), bad).toBe(false);
    }
  });

  it('a workspace pattern matches whole ids, * within the id alphabet only', () => {
    const token = { workspaces: 'team-a-*' };
    expect(tokenAllows(token, 'team-a-1')).toBe(true);
    expect(tokenAllows(token, 'team-a-')).toBe(true);
    expect(tokenAllows(token, 'team-b-1')).toBe(false);
    expect(tokenAllows(token, 'xteam-a-1')).toBe(false);
    expect(tokenAllows({ workspaces: 'ws-1' }, 'ws-10')).toBe(false);
    expect(tokenAllows({ workspaces: null }, 'anything')).toBe(true);
  });
});
