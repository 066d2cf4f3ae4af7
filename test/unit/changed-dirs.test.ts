// Which directories a persist walks, from `find`'s records, without I/O: every ancestor of a
// changed entry (the root included) and a changed directory itself; a directory is taken by id
// only when it holds no change and did not change (the builder also asks that its parent be the
// directory the previous walk recorded there).
import { describe, expect, it } from 'vitest';
import { changedDirsOf, findTime } from '../../src/archive/changed-dirs.js';

const records = (...items: [string, string | Buffer][]) => Buffer.concat(items.map(([type, path]) => Buffer.concat([Buffer.from(`${type} `), Buffer.from(path), Buffer.from([0])])));
const b = (s: string) => Buffer.from(s);

describe('changedDirsOf', () => {
  it('nothing changed: the root is clean and every directory reusable', () => {
    const none = changedDirsOf(Buffer.alloc(0));
    expect(none.rootClean).toBe(true);
    expect(none.reusable(b('a'))).toBe(true);
    expect(none.changedEntries).toBe(0);
  });

  it('a changed file makes every ancestor walked, and leaves its siblings reusable', () => {
    const one = changedDirsOf(records(['f', 'a/b/c.txt']));
    expect(one.rootClean).toBe(false);
    expect(one.reusable(b('a'))).toBe(false);
    expect(one.reusable(b('a/b'))).toBe(false);
    expect(one.reusable(b('x'))).toBe(true);
    expect(one.reusable(b('a/other'))).toBe(true);
  });

  it('changedEntry names exactly the entries find listed (their ctime moved), not their ancestors or siblings', () => {
    const some = changedDirsOf(records(['f', 'a/b/c.txt'], ['l', 'a/link'], ['d', 'x']));
    for (const changed of ['a/b/c.txt', 'a/link', 'x']) expect(some.changedEntry(b(changed)), changed).toBe(true);
    for (const quiet of ['a', 'a/b', 'a/b/d.txt', 'a/b/c.txt2', 'x/y', '']) expect(some.changedEntry(b(quiet)), quiet).toBe(false);
  });

  it('a changed directory is walked; what below it did not change is reusable as far as find can say (the builder also asks for a recorded parent)', () => {
    const dir = changedDirsOf(records(['d', 'a/b']));
    expect(dir.reusable(b('a/b'))).toBe(false);
    expect(dir.reusable(b('a'))).toBe(false);
    expect(dir.reusable(b('a/b/c'))).toBe(true);
    expect(dir.changedEntry(b('a/b'))).toBe(true);
    expect(dir.reusable(b('a/sibling'))).toBe(true);
  });

  it('the root changed itself: the tree is walked, its unchanged subdirectories are not', () => {
    const root = changedDirsOf(records(['d', '']));
    expect(root.rootClean).toBe(false);
    expect(root.changedEntry(b(''))).toBe(true);
    // The root is always the directory the walk recorded: an unchanged subdirectory of it is reusable.
    expect(root.reusable(b('a'))).toBe(true);
  });

  it('names are bytes: a newline or invalid UTF-8 in a path is one path', () => {
    const odd = changedDirsOf(records(['f', Buffer.concat([b('we\nird/'), Buffer.from([0xff, 0xfe]), b('/x')])]));
    expect(odd.reusable(b('we\nird'))).toBe(false);
    expect(odd.reusable(Buffer.concat([b('we\nird/'), Buffer.from([0xff, 0xfe])]))).toBe(false);
    expect(odd.reusable(b('we'))).toBe(true);
    expect(odd.changedEntries).toBe(1);
  });

  it('skips records that are not `<type> <path>`', () => {
    expect(changedDirsOf(Buffer.from('garbage\0')).changedEntries).toBe(0);
  });

  it('writes times as find takes them, to the nanosecond', () => {
    expect(findTime(1_796_300_164_874_022_500n)).toBe('@1796300164.874022500');
    expect(findTime(5n)).toBe('@0.000000005');
  });
});
