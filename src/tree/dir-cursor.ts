/**
 * Opens directories beneath a root handle by relative path, one component at a time with
 * `O_NOFOLLOW` (`DirHandle.openDir`): a symlink or a non-directory anywhere on the way makes the
 * open fail, it is never followed. The chain of the last directory opened stays open, so entries
 * met in tree order (a listing, an archive) share their parents' handles; at most one handle per
 * level is open at a time. The root handle stays the caller's.
 */
import { DirHandle } from './dir-handle.js';

const SLASH = 0x2f;

// The components of a relative path (`a/b` → [a, b]; empty → []).
function components(rel: Buffer): Buffer[] {
  const parts: Buffer[] = [];
  let start = 0;
  for (let i = 0; i <= rel.length; i++) {
    if (i < rel.length && rel[i] !== SLASH) continue;
    if (i > start) parts.push(rel.subarray(start, i));
    start = i + 1;
  }
  return parts;
}

export class DirCursor {
  readonly #chain: { readonly name: Buffer; readonly handle: DirHandle }[] = [];

  constructor(readonly root: DirHandle) {}

  /** The directory at `rel` beneath the root (the root itself for an empty path). */
  async at(rel: Buffer): Promise<DirHandle> {
    const parts = components(rel);
    let keep = 0;
    while (keep < parts.length && keep < this.#chain.length && this.#chain[keep]!.name.equals(parts[keep]!)) keep += 1;
    await this.#closeFrom(keep);
    for (let i = keep; i < parts.length; i++) {
      const parent = i === 0 ? this.root : this.#chain[i - 1]!.handle;
      this.#chain.push({ name: Buffer.from(parts[i]!), handle: await parent.openDir(parts[i]!) });
    }
    return parts.length === 0 ? this.root : this.#chain[parts.length - 1]!.handle;
  }

  /** Closes every handle the cursor opened. */
  async close(): Promise<void> {
    await this.#closeFrom(0);
  }

  async #closeFrom(depth: number): Promise<void> {
    while (this.#chain.length > depth) await this.#chain.pop()!.handle.close();
  }
}
