// The change scan read while `find` is still writing (archive/scan-listing.ts), without I/O: a
// directory is finished once a record not beneath it arrives; until then every answer about it
// errs towards walking, and a failed scan says everything changed.
import { describe, expect, it } from 'vitest';
import { ScanListing } from '../../src/archive/scan-listing.js';

const record = (type: string, path: string | Buffer) => Buffer.concat([Buffer.from(`${type} `), Buffer.from(path), Buffer.from([0])]);
const records = (...items: [string, string | Buffer][]) => Buffer.concat(items.map(([type, path]) => record(type, path)));
const b = (s: string) => Buffer.from(s);

// A pre-order scan of: root/{a/{x (changed), a1/}, ab/{y}, b/{c/{z (changed)}}, top.txt (changed)}.
const SCAN: [string, string][] = [
  ['u', ''],
  ['u', 'a'],
  ['f', 'a/x'],
  ['u', 'a/a1'],
  ['u', 'ab'],
  ['u', 'b'],
  ['u', 'b/c'],
  ['f', 'b/c/z'],
  ['f', 'top.txt'],
];

// Every answer the walk asks for, of a listing.
function answers(listing: ScanListing) {
  const dirs = ['', 'a', 'a/a1', 'ab', 'b', 'b/c', 'missing'];
  const entries = ['a/x', 'a/other', 'ab/y', 'b/c/z', 'top.txt', 'quiet.txt', 'a', 'b/c'];
  return {
    rootClean: listing.rootClean,
    changedEntries: listing.changedEntries,
    reusable: Object.fromEntries(dirs.map((d) => [d, listing.reusable(b(d))])),
    changed: Object.fromEntries(entries.map((e) => [e, listing.changedEntry(b(e))])),
  };
}

describe('ScanListing', () => {
  it('read whole or a byte at a time, it gives the same answers', () => {
    const output = records(...SCAN);
    const whole = ScanListing.of(output);
    const bytewise = new ScanListing();
    for (let i = 0; i < output.length; i++) bytewise.push(output.subarray(i, i + 1));
    bytewise.end();
    expect(answers(bytewise)).toEqual(answers(whole));
    expect([whole.records, bytewise.records]).toEqual([SCAN.length, SCAN.length]);
    expect(answers(whole)).toEqual({
      rootClean: false,
      changedEntries: 3,
      reusable: { '': false, a: false, 'a/a1': true, ab: true, b: false, 'b/c': false, missing: true },
      changed: { 'a/x': true, 'a/other': false, 'ab/y': false, 'b/c/z': true, 'top.txt': true, 'quiet.txt': false, a: false, 'b/c': false },
    });
  });

  it('finishes a directory once a record not beneath it arrives, and tells which and in what order', () => {
    const listing = new ScanListing();
    listing.push(records(['u', ''], ['u', 'a'], ['f', 'a/x'], ['u', 'a/a1']));
    expect(listing.finished(b('a'))).toBe(false);
    expect(listing.openUnder('')).toBe('a');
    expect(listing.openUnder('a')).toBe('a/a1');
    // `ab` is not beneath `a` (a shared prefix is not a path prefix).
    listing.push(record('u', 'ab'));
    expect(listing.finished(b('a/a1'))).toBe(true);
    expect(listing.finished(b('a'))).toBe(true);
    expect(listing.finished(b('ab'))).toBe(false);
    expect(listing.finishedUnder('')).toEqual(['a']);
    expect(listing.finishedUnder('a')).toEqual(['a/a1']);
    expect(listing.openUnder('')).toBe('ab');
    listing.push(records(['u', 'b'], ['u', 'b/c']));
    expect(listing.finishedUnder('')).toEqual(['a', 'ab']);
    expect(listing.finished(b(''))).toBe(false);
    listing.end();
    expect(listing.finished(b(''))).toBe(true);
    expect(listing.finished(b('b/c'))).toBe(true);
  });

  it('errs towards walking until it knows: nothing unfinished is reusable, no entry of an unfinished directory unchanged, the tree not clean before the end', () => {
    const listing = new ScanListing();
    expect(listing.rootClean).toBe(false);
    expect(listing.reusable(b('a'))).toBe(false);
    expect(listing.changedEntry(b('top.txt'))).toBe(true);
    expect(listing.changedEntry(b(''))).toBe(true);
    listing.push(records(['u', ''], ['u', 'a'], ['u', 'a/a1']));
    // The root's own verdict is in (it was listed); a directory's own verdict once it is listed.
    expect(listing.changedEntry(b(''))).toBe(false);
    expect(listing.changedEntry(b('a'))).toBe(false);
    // `a` is not finished: `a/x` may yet be listed, and `a` may hold a change.
    expect(listing.changedEntry(b('a/x'))).toBe(true);
    expect(listing.reusable(b('a'))).toBe(false);
    listing.push(records(['u', 'b']));
    expect(listing.changedEntry(b('a/x'))).toBe(false);
    expect(listing.reusable(b('a'))).toBe(true);
    expect(listing.reusable(b('a/a1'))).toBe(true);
    // Entries of the root: only at the end.
    expect(listing.changedEntry(b('top.txt'))).toBe(true);
    expect(listing.rootClean).toBe(false);
    listing.end();
    expect(listing.changedEntry(b('top.txt'))).toBe(false);
    expect(listing.rootClean).toBe(true);
  });

  it('a failed scan says everything changed, and ends every wait', async () => {
    const listing = new ScanListing();
    listing.push(records(['u', ''], ['u', 'a'], ['u', 'b']));
    expect(listing.reusable(b('a'))).toBe(true);
    const waiting = listing.next();
    listing.fail();
    await waiting;
    expect(listing.ended).toBe(false);
    expect(listing.finished(b('b'))).toBe(true);
    expect(listing.reusable(b('a'))).toBe(false);
    expect(listing.changedEntry(b('a/anything'))).toBe(true);
    expect(listing.rootClean).toBe(false);
    // Nothing after a failure is read.
    listing.push(record('f', 'late'));
    expect(listing.changedEntries).toBe(0);
    await listing.next();
  });

  it('wakes a waiter for each record that arrives, not for a record still partial, and at the end', async () => {
    const listing = new ScanListing();
    // Every promise callback already due has run after a turn of the event loop.
    const settled = () => new Promise((resolve) => setImmediate(resolve));
    let woke = 0;
    void listing.next().then(() => (woke += 1));
    const one = record('u', '');
    listing.push(one.subarray(0, 2));
    await settled();
    expect(woke).toBe(0);
    listing.push(one.subarray(2));
    await settled();
    expect(woke).toBe(1);
    void listing.next().then(() => (woke += 1));
    listing.end();
    await settled();
    expect(woke).toBe(2);
    // After the end, at once.
    await listing.next();
  });

  it('names are bytes: a newline, invalid UTF-8 or a record-like name is one path', () => {
    const odd = Buffer.concat([b('we\nird'), Buffer.from([0xff])]);
    const listing = ScanListing.of(records(['u', ''], ['u', odd], ['f', Buffer.concat([odd, b('/u x')])], ['u', 'we']));
    expect(listing.reusable(odd)).toBe(false);
    expect(listing.reusable(b('we'))).toBe(true);
    expect(listing.changedEntry(Buffer.concat([odd, b('/u x')]))).toBe(true);
    expect(listing.changedEntries).toBe(1);
  });

  it('counts every record toward the scan\'s limit, one that is not `<type> <path>` too, and reads nothing from it', () => {
    const listing = ScanListing.of(Buffer.from('garbage\0u \0x\0'));
    expect(listing.records).toBe(3);
    expect(listing.changedEntries).toBe(0);
    expect(listing.reusable(b('garbage'))).toBe(true);
  });
});
