/**
 * A tree as a remote machine described it (a Vercel sandbox's `find`, parsed without trusting it
 * by providers/vercel/parse-listing.ts): what the archive builds a revision from when the tree is
 * not on this host (archive/listing-builder.ts). Keys are the raw path bytes as latin1 strings.
 */

export type ListedType = 'file' | 'dir' | 'symlink' | 'fifo' | 'closed-dir';

/** One entry of a sandbox tree as the sandbox described it. */
export interface ListedEntry {
  /** Normalised path relative to the tree (`a/b`), raw bytes. */
  readonly rel: Buffer;
  /** `rel` as a latin1 string (map key, sorts bytewise). */
  readonly key: string;
  readonly type: ListedType;
  readonly size: number;
  /** Permission bits as listed (`0o7777` at most). */
  readonly mode: number;
  readonly mtimeNs: bigint;
  readonly ctimeNs: bigint;
  readonly ino: bigint;
  readonly dev: bigint;
  /** Symlink target, raw bytes (symlinks only). */
  readonly target?: Buffer;
}

export interface ListingSkips {
  /** Sockets, device nodes, doors: never archived. */
  special: number;
  /** Over the path-bytes or depth limit. */
  overLimit: number;
  /** A path listed twice, or whose parent is not a listed directory. */
  inconsistent: number;
}

export interface Listing {
  /** Entries by key, in listing order (parents before children). */
  readonly entries: ReadonlyMap<string, ListedEntry>;
  readonly skipped: ListingSkips;
  /** More entries than `maxEntries`: the listing is incomplete, so nothing unlisted may be taken as deleted. */
  readonly truncated: boolean;
}

/** True when two listings describe the same version of an entry (type, size, mode, times, inode). */
export function sameListed(a: ListedEntry, b: ListedEntry): boolean {
  return a.type === b.type && a.size === b.size && a.mode === b.mode && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs && a.ino === b.ino && a.dev === b.dev;
}
