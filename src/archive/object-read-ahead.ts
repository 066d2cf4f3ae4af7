/**
 * Reads a revision's objects ahead through the thread pool while a restore through tar reads them
 * synchronously, one at a time (extract-revision.ts) — but only once those reads have proved slow.
 * From the page cache a synchronous read takes microseconds and reading ahead only costs CPU
 * (BENCHMARKS.md, "Restore through tar": 1.4–2.5x slower warm; run R: 2.5–4.5x). So it begins only
 * when a sample of the restore's reads is slow (its median) and the process's block reads show
 * that they went to the disk. From the disk each read waits for
 * the device alone; several reads in flight keep it busy, and the restore's own read then finds
 * the object in the page cache (BENCHMARKS.md, run R: a cold 100,000-file restore).
 *
 * What is read ahead only fills the page cache: the restore still reads and checks every object
 * itself, and a failed read ahead is ignored (the restore's own read reports it).
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import type { ObjectStore } from './object-store.js';
import type { FileNode, TreeNode } from './tree-object.js';

/**
 * A sample of reads whose median is longer than this (µs) means the objects come from the disk.
 * The median, not the mean: one read that met a garbage collection (tens of ms in a large heap)
 * would make a whole warm sample look cold.
 */
export const COLD_READ_MICROS = 100;
/** Reads in a sample. */
export const SAMPLE = 32;
/** Objects read ahead of the restore at most. */
export const AHEAD = 256;
/** Reads ahead in flight at most. */
const IN_FLIGHT = 16;

/** Of a sample's reads, at least this share went to the disk (the process's block reads say so). */
const DISK_SHARE = 0.25;

export interface ReadAheadOptions {
  /** The files the restore reads, in its order: a tree's entries in order, a directory's before the next entry. */
  readonly reads: (node: TreeNode) => node is FileNode;
  readonly signal: AbortSignal;
  /** Block reads of this process so far (getrusage `ru_inblock`). @default from process.resourceUsage() */
  readonly blockReads?: () => number;
  /** Told each object read ahead (tests). */
  readonly onReadAhead?: (object: string) => void;
}

export class ObjectReadAhead {
  /** Objects the restore has read. */
  #consumed = 0;
  #sample: number[] = [];
  /** The process's block reads when the sample began: looked at for the first sample and after a slow one only. */
  #blocksAtSample: number | null = null;
  /** The sample before was slow: the next one looks at the block reads. */
  #armed = false;
  #running: Promise<void> | null = null;
  #wake: (() => void) | null = null;
  readonly #stop = new AbortController();
  /** Objects read ahead (for the restore's report and tests). */
  readAhead = 0;

  constructor(
    private readonly store: Pick<ObjectStore, 'readTree' | 'objectPath'>,
    private readonly root: string,
    private readonly options: ReadAheadOptions,
  ) {}

  /** Whether reading ahead has begun. */
  get active(): boolean {
    return this.#running !== null;
  }

  /** The restore read one object, in `micros`; reading ahead begins once a sample of reads is slow. */
  read(micros: number): void {
    this.#consumed += 1;
    this.#wake?.();
    if (this.#running) return;
    const blockReads = this.options.blockReads ?? (() => process.resourceUsage().fsRead);
    // process.resourceUsage() took 50-70 µs here (it adds up every thread's counters): called at
    // every sample it was 4 % of a warm restore (BENCHMARKS.md, run AJ). A warm restore looks once.
    if (this.#sample.length === 0) this.#blocksAtSample = this.#consumed === 1 || this.#armed ? blockReads() : null;
    this.#sample.push(micros);
    if (this.#sample.length < SAMPLE) return;
    // Slow is not enough (a loaded machine deschedules a warm read too): the reads went to the disk.
    const median = this.#sample.sort((a, b) => a - b)[SAMPLE >> 1]!;
    this.#sample = [];
    this.#armed = median > COLD_READ_MICROS;
    if (!this.#armed || this.#blocksAtSample === null) return;
    if (blockReads() - this.#blocksAtSample >= SAMPLE * DISK_SHARE) this.#running = this.#run().catch(() => undefined);
  }

  /** Stops reading ahead; resolves once no read ahead is in flight. */
  async stop(): Promise<void> {
    this.#stop.abort();
    this.#wake?.();
    await this.#running;
  }

  async #run(): Promise<void> {
    const signal = this.#stop.signal;
    const seen = new Set<string>();
    let listed = 0;
    const inFlight = new Set<Promise<void>>();
    const visit = async (tree: string): Promise<boolean> => {
      for (const node of await this.store.readTree(tree)) {
        if (signal.aborted || this.options.signal.aborted) return false;
        if (node.type === 'd') {
          if (!(await visit(node.tree))) return false;
          continue;
        }
        if (!this.options.reads(node)) continue;
        if (node.linkKey !== undefined) {
          if (seen.has(node.linkKey)) continue;
          seen.add(node.linkKey);
        }
        listed += 1;
        // Behind the restore: already read. Too far ahead, or too many in flight: wait.
        if (listed <= this.#consumed) continue;
        while (!signal.aborted && (listed - this.#consumed > AHEAD || inFlight.size >= IN_FLIGHT)) {
          if (inFlight.size >= IN_FLIGHT) await Promise.race(inFlight);
          else await new Promise<void>((resolve) => (this.#wake = resolve));
          this.#wake = null;
        }
        if (signal.aborted) return false;
        const read = this.#fill(node).finally(() => inFlight.delete(read));
        inFlight.add(read);
      }
      return true;
    };
    try {
      await visit(this.root);
    } finally {
      await Promise.all(inFlight);
    }
  }

  // Reads the object once, whole, so that the page cache holds it.
  async #fill(node: FileNode): Promise<void> {
    const handle = await open(this.store.objectPath(node.object), constants.O_RDONLY | constants.O_NOFOLLOW).catch(() => null);
    if (!handle) return;
    try {
      const buffer = Buffer.allocUnsafe(Math.min(node.size, 64 * 1024) || 1);
      for (let at = 0; at < node.size; ) {
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, at);
        if (bytesRead === 0) break;
        at += bytesRead;
      }
      this.readAhead += 1;
      this.options.onReadAhead?.(node.object);
    } catch {
      // The restore's own read reports it.
    } finally {
      await handle.close().catch(() => undefined);
    }
  }
}
