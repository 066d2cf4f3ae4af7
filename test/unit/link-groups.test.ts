import { describe, expect, it } from 'vitest';
import { LinkGroups } from '../../src/archive/link-groups.js';

describe('LinkGroups', () => {
  it('gives every name of one inode the key its first name decided', () => {
    const groups = new LinkGroups('t');
    expect(groups.keyFor('1:10', 10n, 'old')).toBe('old');
    expect(groups.keyFor('1:10', 10n, undefined)).toBe('old');
    expect(groups.keyFor('1:10', 10n, 'other')).toBe('old');
  });

  it('never lets two inodes share a key, whatever their previous nodes offer', () => {
    const groups = new LinkGroups('t');
    expect(groups.keyFor('1:10', 10n, 'k')).toBe('k');
    // A group split in two: the second inode may not take the first one's key.
    expect(groups.keyFor('1:11', 11n, 'k')).toBe('11.t');
    // Same inode number on another device: a key of its own.
    expect(groups.keyFor('2:11', 11n, undefined)).toBe('11.t.1');
    // An offered key that equals a new key already given is refused too.
    expect(groups.keyFor('1:12', 12n, '11.t')).toBe('12.t');
  });

  it('tags new keys by walk, so a new inode never takes an inode number an older revision used as a key', () => {
    const a = new LinkGroups().keyFor('1:42', 42n, undefined);
    const b = new LinkGroups().keyFor('1:42', 42n, undefined);
    expect(a).not.toBe('42');
    expect(a).not.toBe(b);
  });
});
