// Property tests of the path and workspace-id rules (G7): 10,000 generated bad inputs per rule
// are refused with a PayloadInvalidError and nothing else; openParentBeneath runs against a real
// temporary tree (with symlinks pointing out of it) and nothing on disk changes.
import { lstat, mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodePath, encodePath } from '../../src/archive/tree-walk.js';
import { fleetKeys } from '../../src/keys.js';
import { localHandle, parseLocalHandle } from '../../src/providers/local/live-paths.js';
import { checkRelativePath, openParentBeneath } from '../../src/providers/local/safe-path.js';
import { DirHandle } from '../../src/tree/dir-handle.js';
import { ProvisionPayload, WORKSPACE_ID_PATTERN, WorkspaceId } from '../../src/queues/index.js';
import { expectPayloadInvalid, expectRefused, FUZZ_RUNS, fuzzParams, hostileString } from '../helpers/fuzz.js';

const ID_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-';
// The id rule written out by hand, to check the regex against.
const isValidId = (s: string) => s.length >= 1 && s.length <= 128 && [...s].every((c) => ID_CHARS.includes(c));

describe('fuzz: workspace ids', () => {
  const badIds = fc
    .oneof(
      hostileString,
      fc.string({ unit: fc.constantFrom(...ID_CHARS), minLength: 129, maxLength: 300 }),
      fc.tuple(fc.string({ unit: fc.constantFrom(...ID_CHARS), maxLength: 60 }), fc.string({ unit: 'binary', minLength: 1, maxLength: 3 }), fc.string({ unit: fc.constantFrom(...ID_CHARS), maxLength: 60 })).map(
        ([a, b, c]) => a + b + c,
      ),
    )
    .filter((s) => !isValidId(s));

  it('10,000 bad ids: the pattern rejects them and the schema refuses them', () => {
    fc.assert(
      fc.property(badIds, (id) => {
        if (WORKSPACE_ID_PATTERN.test(id)) throw new Error(`pattern accepted ${JSON.stringify(id)}`);
        expectRefused('workspaceId', WorkspaceId, id);
        expectRefused('provision payload', ProvisionPayload, { workspaceId: id });
      }),
      fuzzParams(2_000),
    );
  });

  it('valid ids are single safe path segments, key parts and handle parts', () => {
    const goodIds = fc.string({ unit: fc.constantFrom(...ID_CHARS), minLength: 1, maxLength: 128 });
    fc.assert(
      fc.property(goodIds, fc.integer({ min: 1, max: 1_000_000 }), (id, generation) => {
        expect(WORKSPACE_ID_PATTERN.test(id)).toBe(true);
        expect(path.join('/archive', id)).toBe(`/archive/${id}`);
        expect(fleetKeys('{fleet}').address(id).split(':')).toContain(id);
        expect(parseLocalHandle(localHandle('host-1', id, generation))).toEqual({ hostId: 'host-1', workspaceId: id, generation });
      }),
      { numRuns: 2_000, seed: 2_001 },
    );
  });
});

describe('fuzz: encodePath / decodePath', () => {
  it('10,000 byte names (mostly invalid UTF-8) round-trip exactly through JSON', () => {
    const names = fc.oneof(
      fc.uint8Array({ minLength: 1, maxLength: 255 }),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 100 }).map((s) => Buffer.from(s, 'utf8')),
      fc.string({ maxLength: 40 }).map((s) => Buffer.from(`b64:${s}`)),
      fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.concat([Buffer.from('ok/'), b, Buffer.from([0xc3])])),
    );
    fc.assert(
      fc.property(names, (bytes) => {
        const buffer = Buffer.from(bytes);
        const encoded = encodePath(buffer);
        const wire = JSON.parse(JSON.stringify({ p: encoded })) as { p: string };
        if (!decodePath(wire.p).equals(buffer)) throw new Error(`round trip lost bytes of ${buffer.toString('hex')}`);
        // The format's rule, written out: text exactly when the bytes round-trip through UTF-8 (trees and manifests keep their ids).
        const text = buffer.toString('utf8');
        const canonical = Buffer.from(text, 'utf8').equals(buffer) && !text.startsWith('b64:') ? text : `b64:${buffer.toString('base64')}`;
        if (encoded !== canonical) throw new Error(`${buffer.toString('hex')} encoded as ${encoded}, the format says ${canonical}`);
      }),
      fuzzParams(2_100),
    );
  });

  it('decodePath never throws on arbitrary text', () => {
    fc.assert(fc.property(fc.oneof(hostileString, hostileString.map((s) => `b64:${s}`)), (text) => void decodePath(text)), fuzzParams(2_101));
  });
});

describe('fuzz: relative paths', () => {
  const NAME = fc.stringMatching(/^[A-Za-z0-9_-][A-Za-z0-9._-]{0,15}$/).filter((s) => s !== '.' && s !== '..');
  // A segment that by itself makes a path bad.
  const poisonSegment = fc.oneof(
    fc.constantFrom('..', '.', ''),
    fc.string({ unit: 'binary', maxLength: 10 }).map((s) => `${s}\0`),
    fc.integer({ min: 256, max: 400 }).map((n) => 'n'.repeat(n)),
    fc.integer({ min: 86, max: 120 }).map((n) => '€'.repeat(n)),
  );
  const shapeBad = fc.oneof(
    fc.tuple(fc.array(NAME, { maxLength: 4 }), poisonSegment, fc.array(NAME, { maxLength: 4 })).map(([a, p, b]) => [...a, p, ...b].join('/')),
    fc.array(NAME, { minLength: 1, maxLength: 4 }).map((parts) => `/${parts.join('/')}`),
    fc.array(NAME, { minLength: 1, maxLength: 4 }).map((parts) => `${parts.join('/')}/`),
    fc.integer({ min: 260, max: 400 }).map((n) => Array.from({ length: n }, () => 'abcdefghijklmnop').join('/')),
  );

  it('checkRelativePath: 10,000 bad shapes are refused', () => {
    fc.assert(
      fc.property(shapeBad, (relative) => {
        let caught: unknown;
        try {
          checkRelativePath('path', relative);
        } catch (error) {
          caught = error;
        }
        expectPayloadInvalid(caught, `accepted ${JSON.stringify(relative.slice(0, 80))}`);
      }),
      fuzzParams(2_200),
    );
  });

  describe('openParentBeneath against a real tree', () => {
    let parent: string;
    let root: string;
    let before: string;
    let rootHandle: DirHandle;
    /** Inodes of the tree's real directories (where a resolved parent may be). */
    const directories = new Set<bigint>();

    // Everything under `dir` (lstat facts, not following links), as one comparable string.
    async function snapshot(dir: string): Promise<string> {
      const lines: string[] = [];
      async function walk(rel: string): Promise<void> {
        const stats = await lstat(path.join(dir, rel));
        lines.push(`${rel} ${stats.mode} ${stats.size} ${stats.ino} ${stats.nlink} ${stats.mtimeMs} ${stats.ctimeMs}`);
        if (stats.isDirectory()) for (const name of (await readdir(path.join(dir, rel))).sort()) await walk(path.join(rel, name));
      }
      await walk('.');
      return lines.join('\n');
    }

    beforeAll(async () => {
      parent = await mkdtemp(path.join(tmpdir(), 'fleet-fuzz-paths-'));
      root = path.join(parent, 'root');
      await mkdir(path.join(parent, 'outside'));
      await writeFile(path.join(parent, 'outside', 'secret.txt'), 'secret');
      await mkdir(path.join(root, 'dir', 'sub'), { recursive: true });
      await writeFile(path.join(root, 'file.txt'), 'file');
      await writeFile(path.join(root, 'dir', 'sub', 'leaf.txt'), 'leaf');
      await symlink('../outside', path.join(root, 'link'));
      await symlink(path.join(parent, 'outside'), path.join(root, 'abs'));
      await symlink('../../outside/secret.txt', path.join(root, 'dir', 'inner-link'));
      await symlink('/etc', path.join(root, 'dir', 'sub', 'etc'));
      before = await snapshot(parent);
      rootHandle = await DirHandle.open(root);
      for (const dir of ['', 'dir', 'dir/sub']) directories.add((await lstat(path.join(root, dir), { bigint: true })).ino);
    });

    afterAll(async () => {
      await rootHandle.close();
      await rm(parent, { recursive: true, force: true });
    });

    // Resolves the parent of `relative` beneath the root; null when it does not exist.
    async function resolve(relative: string): Promise<bigint | null> {
      const parent = await openParentBeneath(rootHandle, relative);
      if (!parent) return null;
      const { ino } = await parent.dir.stat();
      if (parent.owned) await parent.dir.close();
      return ino;
    }

    // A path that must be refused: bad shape, or through a symlink or a file of the tree.
    const treeBad = fc.oneof(
      shapeBad,
      fc
        .tuple(
          fc.constantFrom('link', 'abs', 'dir/inner-link', 'dir/sub/etc', 'file.txt/x', 'dir/sub/leaf.txt/y', 'dir/sub/leaf.txt/y/z'),
          fc.array(fc.oneof(NAME, fc.constantFrom('secret.txt', 'passwd')), { maxLength: 3 }),
        )
        .map(([poison, rest]) => [poison, ...rest].join('/')),
    );

    it('10,000 bad paths are refused and nothing on disk changes', async () => {
      await fc.assert(
        fc.asyncProperty(treeBad, async (relative) => {
          let caught: unknown;
          try {
            await resolve(relative);
          } catch (error) {
            caught = error;
          }
          expectPayloadInvalid(caught, `resolved ${JSON.stringify(relative.slice(0, 80))}`);
        }),
        fuzzParams(2_300),
      );
      expect(await snapshot(parent)).toBe(before);
    });

    it('any text either is refused, has no parent, or resolves to a real directory of the tree', async () => {
      let refused = 0;
      await fc.assert(
        fc.asyncProperty(fc.oneof(hostileString, treeBad, fc.array(fc.oneof(NAME, fc.constantFrom('dir', 'sub', 'link', 'file.txt')), { minLength: 1, maxLength: 4 }).map((p) => p.join('/'))), async (relative) => {
          let resolved: bigint | null;
          try {
            resolved = await resolve(relative);
          } catch (error) {
            expectPayloadInvalid(error, '');
            refused += 1;
            return;
          }
          if (resolved !== null && !directories.has(resolved)) throw new Error(`${JSON.stringify(relative)} resolved to inode ${resolved}, not a directory of the tree`);
        }),
        fuzzParams(2_301),
      );
      // Both outcomes are exercised: about half the inputs are refused.
      expect(refused).toBeGreaterThan(FUZZ_RUNS / 4);
      expect(refused).toBeLessThan(FUZZ_RUNS);
      expect(await snapshot(parent)).toBe(before);
    });
  });
});
