/**
 * Places the small objects of one build (a walk of a live tree, or the files a sandbox sent): the
 * first `after` on the caller's thread, so that a turn that changed a few hundred files never
 * starts a thread (25-35 ms on 2 idle cores), then the rest through an object writer's thread
 * (object-writer.ts), which writes them as packs when the store packs. Until that thread runs,
 * the caller goes on placing objects itself, up to EARLY_OBJECTS more: then it is `congested`
 * and waits for the thread (on a loaded host a thread can take far longer to start, and a first
 * persist would otherwise place most of its objects as files).
 *
 * Objects the thread places are counted through `onWritten` (its `put` answers before it knows
 * whether the object was new); the caller counts what `putBytesSync` placed itself.
 */
import type { ObjectStore, StoredObject } from './object-store.js';
import { ObjectWriter } from './object-writer.js';

/** Small objects placed on the caller's thread before the rest go to a writer thread. */
export const WRITER_AFTER = 256;
/** Objects placed on the caller's thread while a started writer thread does not run yet, at most. */
export const EARLY_OBJECTS = 256;

export interface ObjectPlacerOptions {
  /** Objects placed on the caller's thread first (default WRITER_AFTER). */
  readonly after?: number;
  /** Each batch the thread placed: objects it wrote (not found stored) and their bytes. */
  readonly onWritten: (objects: number, bytes: number) => void;
}

export class ObjectPlacer {
  readonly #store: ObjectStore;
  readonly #options: ObjectPlacerOptions;
  #writer: ObjectWriter | null = null;
  #placed = 0;
  /** Placed here while the thread was starting. */
  #early = 0;

  constructor(store: ObjectStore, options: ObjectPlacerOptions) {
    this.#store = store;
    this.#options = options;
  }

  /** Stores `bytes` under their id, here or through the thread; `written` only for what was placed here. */
  putBytesSync(bytes: Buffer): StoredObject {
    if (this.#writer === null && ++this.#placed > (this.#options.after ?? WRITER_AFTER)) this.#start();
    const writer = this.#writer;
    if (writer?.online) return bytes.length <= ObjectWriter.MAX_OBJECT_BYTES ? writer.put(bytes) : this.#store.putBytesSync(bytes);
    // Until its thread runs, objects are placed here (up to EARLY_OBJECTS: then the caller is `congested`).
    if (writer) this.#early += 1;
    return this.#store.putBytesSync(bytes);
  }

  /** Starts the thread now and resolves once it runs (tests: every object after `after` goes through it). */
  whenOnline(): Promise<void> {
    return (this.#writer ?? this.#start()).whenOnline();
  }

  /** Whether the caller should wait (`room`) before putting more: the thread is behind, or slow to start. */
  get congested(): boolean {
    return this.#writer !== null && (this.#starting || this.#writer.congested);
  }

  /** Resolves once the thread runs and has room; rejects with its failure. */
  async room(): Promise<void> {
    if (this.#starting) await this.#writer!.whenOnline();
    await this.#writer?.room();
  }

  // The thread does not run yet and EARLY_OBJECTS were placed here meanwhile.
  get #starting(): boolean {
    return this.#early >= EARLY_OBJECTS && !this.#writer!.online;
  }

  /** Resolves once every object put is placed; rejects with the thread's failure. */
  async drain(): Promise<void> {
    await this.#writer?.drain();
  }

  /** Stops the thread, if one started (what it was placing may be left as a temporary: litter). */
  async close(): Promise<void> {
    await this.#writer?.close();
  }

  #start(): ObjectWriter {
    return (this.#writer = this.#store.objectWriter(this.#options.onWritten));
  }
}
