// Tree patches (docs/archive-format.md, "Tree patches"): the edits between two trees, applied
// back, encoded and decoded exactly; malformed or hostile patches refused. Pure: no I/O.
import { describe, expect, it } from 'vitest';
import { encodeTree, sha256, sortNodes, TreeFormatError, type TreeNode } from '../../src/archive/tree-object.js';
import { applyTreePatch, decodeStoredTree, encodeTreePatch, patchBaseOf, patchBetween, type TreePatch } from '../../src/archive/tree-patch.js';
import { rng } from '../helpers/rng.js';

const OBJ = (n: number) => sha256(Buffer.from(String(n)));
const file = (name: string | Buffer, version = 0): TreeNode => ({ type: 'f', name: Buffer.isBuffer(name) ? name : Buffer.from(name), mode: 0o644, size: version, object: OBJ(version), mtimeNs: BigInt(version) });
const BASE = sha256(Buffer.from('base'));

// A random directory: names drawn from a small alphabet (so edits collide), some not UTF-8, every kind.
function randomTree(random: () => number, count: number): TreeNode[] {
  const byName = new Map<string, TreeNode>();
  for (let i = 0; i < count; i++) {
    const raw = Buffer.from(`n${Math.floor(random() * count * 2)}`);
    const name = random() < 0.1 ? Buffer.concat([raw, Buffer.from([0xff])]) : raw;
    const kind = random();
    const node: TreeNode =
      kind < 0.7 ? file(name, Math.floor(random() * 5))
      : kind < 0.8 ? { type: 'd', name, mode: 0o755, tree: OBJ(Math.floor(random() * 5)) }
      : kind < 0.9 ? { type: 'l', name, target: Buffer.from(`../t${Math.floor(random() * 3)}`) }
      : { type: 'p', name, mode: 0o600, mtimeNs: 5n };
    byName.set(name.toString('latin1'), node);
  }
  return sortNodes([...byName.values()]);
}

describe('tree patches', () => {
  it('applying the edits between two trees gives the second back exactly, for random trees of every kind', () => {
    const random = rng(20261205);
    let nonEmpty = 0;
    for (let round = 0; round < 300; round++) {
      const before = randomTree(random, Math.floor(random() * 40));
      const after = randomTree(random, Math.floor(random() * 40));
      const patch = patchBetween(BASE, before, after);
      if (patch.set.length + patch.removed.length > 0) nonEmpty += 1;
      const decoded = decodeStoredTree(encodeTreePatch(patch));
      expect(decoded.kind).toBe('patch');
      const applied = applyTreePatch(before, (decoded as { patch: TreePatch }).patch);
      expect(encodeTree(applied).equals(encodeTree(after))).toBe(true);
    }
    expect(nonEmpty).toBeGreaterThan(250);
  });

  it('a one-entry change is a one-entry patch, and its bytes say it is a patch of what', () => {
    const before = sortNodes(Array.from({ length: 50 }, (_, i) => file(`f-${i}.txt`)));
    const after = before.map((n) => (n.name.toString() === 'f-7.txt' ? file('f-7.txt', 1) : n)).filter((n) => n.name.toString() !== 'f-9.txt');
    const patch = patchBetween(BASE, before, [...after, file('new')]);
    expect(patch.set.map((n) => n.name.toString())).toEqual(['f-7.txt', 'new']);
    expect(patch.removed.map(String)).toEqual(['f-9.txt']);
    const bytes = encodeTreePatch(patch);
    expect(bytes.length * 10).toBeLessThan(encodeTree(before).length);
    expect(patchBaseOf(bytes.subarray(0, 80))).toBe(BASE);
    expect(patchBaseOf(encodeTree(before).subarray(0, 80))).toBeNull();
  });

  it('a tree stored whole decodes as whole; one with a base key is neither', () => {
    const whole = encodeTree([file('a')]);
    expect(decodeStoredTree(whole)).toMatchObject({ kind: 'whole', nodes: [{ name: Buffer.from('a') }] });
    expect(() => decodeStoredTree(Buffer.from(`{"v":2,"e":[],"b":"${BASE}"}`))).toThrow(TreeFormatError);
  });

  it('refuses malformed patches: unsorted or duplicate entries or removals, extra or reordered keys, bad base ids, a name both set and removed, a removal the base lacks', () => {
    const base = sortNodes([file('a'), file('b'), file('c')]);
    const entry = (name: string) => JSON.stringify(['x', 'f', 420, 0, OBJ(0), '0']).replace('"x"', JSON.stringify(name));
    const bad = [
      `{"v":2,"b":"${BASE}","e":[${entry('z')},${entry('y')}],"r":[]}`,
      `{"v":2,"b":"${BASE}","e":[${entry('y')},${entry('y')}],"r":[]}`,
      `{"v":2,"b":"${BASE}","e":[],"r":["b","a"]}`,
      `{"v":2,"b":"${BASE}","e":[],"r":["a","a"]}`,
      `{"v":2,"b":"${BASE}","e":[],"r":["../x"]}`,
      `{"v":2,"b":"${BASE}","e":[],"r":[],"x":1}`,
      `{"v":2,"b":"${BASE.toUpperCase()}","e":[],"r":[]}`,
      `{"v":2,"b":"nothex","e":[],"r":[]}`,
      `{"v":3,"b":"${BASE}","e":[],"r":[]}`,
      `{"b":"${BASE}","v":2,"e":[],"r":[]}`,
      `{"v":2,"b":"${BASE}","e":{},"r":[]}`,
    ];
    for (const text of bad) expect(() => decodeStoredTree(Buffer.from(text)), text).toThrow(TreeFormatError);
    const decode = (text: string) => (decodeStoredTree(Buffer.from(text)) as { patch: TreePatch }).patch;
    expect(() => applyTreePatch(base, decode(`{"v":2,"b":"${BASE}","e":[${entry('b')}],"r":["b"]}`))).toThrow(/both sets and removes/);
    expect(() => applyTreePatch(base, decode(`{"v":2,"b":"${BASE}","e":[${entry('q')}],"r":["q"]}`))).toThrow(/both sets and removes/);
    expect(() => applyTreePatch(base, decode(`{"v":2,"b":"${BASE}","e":[],"r":["bb"]}`))).toThrow(/which its base lacks/);
    expect(() => applyTreePatch(base, decode(`{"v":2,"b":"${BASE}","e":[],"r":["d"]}`))).toThrow(/which its base lacks/);
    expect(applyTreePatch(base, decode(`{"v":2,"b":"${BASE}","e":[${entry('bb')}],"r":["a","c"]}`)).map((n) => n.name.toString())).toEqual(['b', 'bb']);
  });
});
