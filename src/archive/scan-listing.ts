/**
 * What a change scan has said, read record by record while `find` is still writing them, so a
 * persist can walk the directories the scan has finished while it scans the rest (the scan's
 * `find` and the walk then share the two cores instead of taking turns).
 *
 * Records are `<type> <path>\0`: `%y` of an entry whose status changed after the scan's time,
 * and `u` for every other directory (changed-dirs.ts `SCAN_EXPRESSION`). `find` lists in
 * pre-order, a directory before everything beneath it, and never comes back into a directory it
 * has left: so a directory is finished (every record beneath it is in) once a record arrives
 * that is not beneath it, or the scan ends.
 *
 * Every answer errs towards walking until it is certain: an entry is "changed" and a directory
 * not reusable until the scan has finished where its records would be, the tree is not clean
 * until the scan has ended, and a scan that failed says everything changed. A walk that asks
 * early, or a scan that ends short, can only cost reads, never take an old entry for a new one.
 * (A failed scan's earlier answers stand for what they said; the persist walks again without
 * them: persist-to-store.ts.) Pure: no I/O.
 */
import type { ChangedDirs } from './changed-dirs.js';
import { keyOf } from './prior-index.js';

const SLASH = 0x2f;
const SPACE = 0x20;
const DIR = 0x64; // d
const UNCHANGED_DIR = 0x75; // u

// Whether the path `key` lies beneath the directory `dir` (both latin1 keys of paths relative to the root, '' the root).
const beneath = (key: string, dir: string): boolean => (dir === '' ? key !== '' : key.length > dir.length && key.charCodeAt(dir.length) === SLASH && key.startsWith(dir));

// The key of the directory holding `rel` ('' for the root's entries; null for the root itself).
function parentKey(rel: Buffer): string | null {
  if (rel.length === 0) return null;
  const slash = rel.lastIndexOf(SLASH);
  return slash < 0 ? '' : keyOf(rel.subarray(0, slash));
}

export class ScanListing implements ChangedDirs {
  /** Directories holding, at any depth, an entry that changed. */
  readonly #holding = new Set<string>();
  /** Entries that changed themselves. */
  readonly #changed = new Set<string>();
  /** Directories the scan has listed (its own verdict is in). */
  readonly #visited = new Set<string>();
  /** Directories the scan has finished. */
  readonly #finished = new Set<string>();
  /** Per directory: its subdirectories the scan has finished, in the order it finished them (keys of their paths). */
  readonly #finishedUnder = new Map<string, string[]>();
  /** The directories the scan is inside, the root first. */
  readonly #open: string[] = [];
  /** Bytes of a record a chunk ended in the middle of. */
  #partial: Buffer | null = null;
  #ended = false;
  #failed = false;
  #wake: (() => void) | null = null;
  #said: Promise<void> | null = null;
  #changedEntries = 0;
  #records = 0;

  /** The listing of a whole scan's output (a record without its final `\0` at the end counts). */
  static of(output: Buffer): ScanListing {
    const listing = new ScanListing();
    listing.push(output);
    listing.end();
    return listing;
  }

  /** Whether the scan ended, with every record in. */
  get ended(): boolean {
    return this.#ended && !this.#failed;
  }

  get changedEntries(): number {
    return this.#changedEntries;
  }

  /** Records read so far, well formed or not (the scan's output limit counts them). */
  get records(): number {
    return this.#records;
  }

  get rootClean(): boolean {
    return this.ended && !this.#holding.has('') && !this.#changed.has('');
  }

  reusable(rel: Buffer): boolean {
    const key = keyOf(rel);
    return this.#finishedAt(key) && !this.#holding.has(key) && !this.#changed.has(key);
  }

  changedEntry(rel: Buffer): boolean {
    const key = keyOf(rel);
    if (this.#changed.has(key)) return true;
    if (this.ended) return false;
    // Listed once the scan has listed it (a directory) or finished the directory holding it.
    if (this.#failed) return true;
    if (this.#visited.has(key)) return false;
    const parent = parentKey(rel);
    return parent === null || !this.#finished.has(parent);
  }

  /** Whether every record beneath the directory `rel`, and its own, is in (the scan ended, or failed). */
  finished(rel: Buffer): boolean {
    return this.#ended || this.#finished.has(keyOf(rel));
  }

  /** Keys of the subdirectories of the directory keyed `dir` the scan has finished, in the order it did (it only grows). */
  finishedUnder(dir: string): readonly string[] {
    return this.#finishedUnder.get(dir) ?? [];
  }

  /** The key of the subdirectory of the directory keyed `dir` the scan is inside now, if any. */
  openUnder(dir: string): string | null {
    const at = this.#open.indexOf(dir);
    return at >= 0 && at + 1 < this.#open.length ? this.#open[at + 1]! : null;
  }

  /** Resolves when the scan says more (a record, its end or its failure). */
  next(): Promise<void> {
    if (this.#ended) return Promise.resolve();
    this.#said ??= new Promise((resolve) => {
      this.#wake = resolve;
    });
    return this.#said;
  }

  /** Takes the next chunk of the scan's output. */
  push(chunk: Buffer): void {
    if (this.#ended) return;
    let start = 0;
    let bytes = chunk;
    if (this.#partial !== null) {
      bytes = Buffer.concat([this.#partial, chunk]);
      this.#partial = null;
    }
    let said = false;
    for (let end = bytes.indexOf(0); end >= 0; end = bytes.indexOf(0, start)) {
      this.#records += 1;
      said = this.#record(bytes.subarray(start, end)) || said;
      start = end + 1;
    }
    if (start < bytes.length) this.#partial = Buffer.from(bytes.subarray(start));
    if (said) this.#tell();
  }

  /** The scan ended with every record written. */
  end(): void {
    if (this.#ended) return;
    if (this.#partial !== null) this.#record(this.#partial);
    this.#partial = null;
    this.#ended = true;
    this.#tell();
  }

  /** The scan failed or was stopped: what it did not say is unknown (every answer after errs towards walking). */
  fail(): void {
    if (this.#ended) return;
    this.#failed = true;
    this.#ended = true;
    this.#tell();
  }

  #finishedAt(key: string): boolean {
    return this.#failed ? false : this.#ended || this.#finished.has(key);
  }

  // One record; false for one that is not `<type> <path>`.
  #record(record: Buffer): boolean {
    if (record.length < 2 || record[1] !== SPACE) return false;
    const type = record[0]!;
    const path = record.subarray(2);
    const key = keyOf(path);
    // The scan has left every directory this entry is not beneath: all of their records are in.
    const open = this.#open;
    while (open.length > 0 && !beneath(key, open[open.length - 1]!)) {
      const dir = open.pop()!;
      this.#finished.add(dir);
      if (open.length > 0) {
        const parent = open[open.length - 1]!;
        const list = this.#finishedUnder.get(parent);
        if (list) list.push(dir);
        else this.#finishedUnder.set(parent, [dir]);
      }
    }
    if (type === UNCHANGED_DIR || type === DIR) {
      this.#visited.add(key);
      open.push(key);
    }
    if (type === UNCHANGED_DIR) return true;
    this.#changedEntries += 1;
    this.#changed.add(key);
    if (type === DIR) this.#holding.add(key);
    // Every ancestor, the root ('') included, holds the change.
    if (path.length > 0) this.#holding.add('');
    for (let at = path.indexOf(SLASH); at >= 0; at = path.indexOf(SLASH, at + 1)) this.#holding.add(keyOf(path.subarray(0, at)));
    return true;
  }

  #tell(): void {
    const wake = this.#wake;
    this.#wake = null;
    this.#said = null;
    wake?.();
  }
}
