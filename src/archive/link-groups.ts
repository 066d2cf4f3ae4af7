/**
 * The `linkKey`s of one revision's walk: every name of one multiply-linked inode gets one key,
 * and no two inodes share one (materialize-revision.ts hard-links every entry of a key to the
 * first, so a shared key would give one file another's content).
 *
 * A name offers the key its previous node had when its content is known to be that node's
 * (unchanged, or read again and found the same): an unchanged hard-linked file then keeps its
 * tree after a restore has given its inode a new number. Whatever offers a key, the first name
 * of an inode decides, and a key another inode already holds is never taken twice. A new key is
 * the inode's number and birth time (its ctime where the filesystem keeps no birth time): two
 * walks of one tree make the same keys, and a new inode can match no key of an older revision
 * (a directory taken by id keeps the keys it had, and the inode numbers of a tree a restore
 * replaced are free to come back, but not with their birth times).
 */

export class LinkGroups {
  readonly #byInode = new Map<string, string>();
  readonly #owners = new Map<string, string>();

  /**
   * The key of inode `inode` (`dev:ino`); `fresh` is the key it gets when nothing is offered
   * (see `freshLinkKey`), `offered` the key this name's previous node had, given only when this
   * name's content is that node's.
   */
  keyFor(inode: string, fresh: string, offered: string | undefined): string {
    const known = this.#byInode.get(inode);
    if (known !== undefined) return known;
    let key = offered !== undefined && !this.#owners.has(offered) ? offered : fresh;
    for (let n = 1; this.#owners.has(key); n++) key = `${fresh}.${n}`;
    this.#byInode.set(inode, key);
    this.#owners.set(key, inode);
    return key;
  }
}

/** The new key of an inode: its number and birth time (ctime where there is none). */
export function freshLinkKey(stats: { readonly ino: bigint; readonly birthtimeNs: bigint; readonly ctimeNs: bigint }): string {
  return `${stats.ino}.${stats.birthtimeNs > 0n ? stats.birthtimeNs : stats.ctimeNs}`;
}
