import { describe, expect, it } from 'vitest';
import { canonicalJson, manifestHash, manifestVersion } from '../../src/queues/manifest-hash.js';
import { BaseManifest } from '../../src/queues/base-manifest.js';
import { PayloadInvalidError } from '../../src/errors/payload-invalid-error.js';
import { parsePayload } from '../../src/queues/payload.js';

const base = parsePayload('manifest', BaseManifest, {
  schemaVersion: 1,
  name: 'node-base',
  runtime: 'node22',
  packages: ['git'],
  files: [{ path: 'a.txt', content: 'A' }],
  setup: ['echo hi > x'],
  env: { NODE_ENV: 'development' },
  envAllowlist: ['HTTP_PROXY'],
  smoke: ['test -f x'],
});

describe('manifest hash', () => {
  it('is stable across key order and parses', () => {
    const reordered = parsePayload('manifest', BaseManifest, JSON.parse(canonicalJson(base)));
    expect(manifestHash(reordered)).toBe(manifestHash(base));
    expect(manifestHash(base)).toMatch(/^[0-9a-f]{64}$/);
    expect(manifestVersion(base)).toBe(`node-base-${manifestHash(base).slice(0, 12)}`);
  });

  const changes: Record<string, Partial<BaseManifest>> = {
    runtime: { runtime: 'python3.13' },
    packages: { packages: ['git', 'curl'] },
    setup: { setup: ['echo bye > x'] },
    'file content': { files: [{ path: 'a.txt', content: 'B', mode: 0o644 }] },
    'file mode': { files: [{ path: 'a.txt', content: 'A', mode: 0o755 }] },
    'file path': { files: [{ path: 'b.txt', content: 'A', mode: 0o644 }] },
    env: { env: { NODE_ENV: 'production' } },
    envAllowlist: { envAllowlist: ['NO_PROXY'] },
    marker: { marker: '.other-marker' },
    smoke: { smoke: ['true'] },
    overlay: { overlay: [{ path: 'config.json', content: '{}', mode: 0o644 }] },
    'overlay content': { overlay: [{ path: 'config.json', content: '{"a":1}', mode: 0o644 }] },
  };
  for (const [input, change] of Object.entries(changes)) {
    it(`changes when ${input} changes`, () => {
      expect(manifestHash({ ...base, ...change })).not.toBe(manifestHash(base));
    });
  }
  it('is what it was before overlays existed for a manifest without one', () => {
    // The hash of a manifest without an overlay must not move (a ready base of it stays reusable):
    // pinned to the value the code before overlays gave for this manifest and fleet version.
    const pinned = parsePayload('manifest', BaseManifest, { ...base, env: { NODE_ENV: 'test' } });
    expect(manifestHash(pinned, '1.2.3')).toBe('93727737c4d7c94b5f4cc78d6a550112078ee6aead2db71467239d983115900b');
  });

  it('changes with the fleet version, not with labels', () => {
    expect(manifestHash(base, '9.9.9')).not.toBe(manifestHash(base));
    expect(manifestHash({ ...base, name: 'other', lane: 'blue' })).toBe(manifestHash(base));
  });
});

describe('manifest secrets', () => {
  const refused: [string, unknown, string][] = [
    ['GITHUB_TOKEN env key', { env: { GITHUB_TOKEN: 'x' } }, 'env.GITHUB_TOKEN'],
    ['DB_PASSWORD env key', { env: { DB_PASSWORD: 'x' } }, 'env.DB_PASSWORD'],
    ['AWS_SECRET_ACCESS_KEY env key', { env: { AWS_SECRET_ACCESS_KEY: 'x' } }, 'env.AWS_SECRET_ACCESS_KEY'],
    ['API_KEY in the allowlist', { envAllowlist: ['API_KEY'] }, 'envAllowlist.0'],
    ['a token value under a harmless name', { env: { HELPER: 'ghp_abcdefghijklmnopqrstuvwxyz012345' } }, 'env.HELPER'],
    ['a private key in a template file', { files: [{ path: 'id_rsa', content: '-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n' }] }, 'files.0.content'],
    ['a token in an overlay file', { overlay: [{ path: '.npmrc', content: '//registry/:_authToken=ghp_abcdefghijklmnopqrstuvwxyz012345' }] }, 'overlay.0.content'],
    ['an overlay path outside the tree', { overlay: [{ path: '../etc/passwd', content: 'x' }] }, 'overlay.0.path'],
    ['a key in a setup command', { setup: ['echo AKIAABCDEFGHIJKLMNOP > creds'] }, 'setup.0'],
  ];
  for (const [label, change, field] of refused) {
    it(`refuses ${label}, naming ${field}`, () => {
      let caught: unknown;
      try {
        parsePayload('manifest', BaseManifest, { schemaVersion: 1, name: 'n', runtime: 'node22', ...(change as object) });
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(PayloadInvalidError);
      expect((caught as PayloadInvalidError).issues.map((i) => i.field)).toContain(field);
    });
  }
});
