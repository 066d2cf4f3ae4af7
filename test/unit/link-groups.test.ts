import { describe, expect, it } from 'vitest';
import { freshLinkKey, LinkGroups } from '../../src/archive/link-groups.js';

describe('LinkGroups', () => {
  it('gives every name of one inode the key its first name decided', () => {
    const groups = new LinkGroups();
    expect(groups.keyFor('1:10', '10.5', 'old')).toBe('old');
    expect(groups.keyFor('1:10', '10.5', undefined)).toBe('old');
    expect(groups.keyFor('1:10', '10.5', 'other')).toBe('old');
  });

  it('never lets two inodes share a key, whatever their previous nodes offer', () => {
    const groups = new LinkGroups();
    expect(groups.keyFor('1:10', '10.5', 'k')).toBe('k');
    // A group split in two: the second inode may not take the first one's key.
    expect(groups.keyFor('1:11', '11.6', 'k')).toBe('11.6');
    // The same number and time on another device: a key of its own.
    expect(groups.keyFor('2:11', '11.6', undefined)).toBe('11.6.1');
    // An offered key that equals a new key already given is refused too.
    expect(groups.keyFor('1:12', '12.7', '11.6')).toBe('12.7');
  });

  it('makes new keys from the inode alone: the same in two walks, never an older inode number', () => {
    const stats = { ino: 42n, birthtimeNs: 1_700_000_000_000_000_001n, ctimeNs: 1_700_000_000_000_000_009n };
    expect(new LinkGroups().keyFor('1:42', freshLinkKey(stats), undefined)).toBe(new LinkGroups().keyFor('1:42', freshLinkKey(stats), undefined));
    // A key an older revision made from a bare inode number (format 1 conversion, or before this rule).
    expect(freshLinkKey(stats)).not.toBe('42');
    // The inode number came back after a restore: another birth time, another key.
    expect(freshLinkKey({ ...stats, birthtimeNs: stats.birthtimeNs + 1n })).not.toBe(freshLinkKey(stats));
    // No birth time kept: the ctime stands in.
    expect(freshLinkKey({ ...stats, birthtimeNs: 0n })).toBe(`42.${stats.ctimeNs}`);
  });
});
