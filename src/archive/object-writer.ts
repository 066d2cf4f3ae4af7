/**
 * Places small objects on a thread of their own while the walk goes on reading and hashing.
 *
 * A first persist of a `node_modules`-sized tree is made of new small files, and placing each as
 * an object is five system calls on the archive (a stat of its id, a create, a write, a close, a
 * rename: about 40 µs together, measured on ext4) against about 15 µs to read it from the tree.
 * Done on the walk's thread those calls were most of the walk (BENCHMARKS.md); here the walk
 * hashes a file, copies its bytes into a batch and goes on, and one worker thread places the
 * batches as the store does (`ObjectStore.putBytesSync`: an id already stored has its time
 * refreshed for the GC, a new one is written to a temporary under `tmp/` and renamed to its id).
 *
 * - Nothing of a live tree reaches the worker: only bytes already read (and checked) and the
 *   archive's own paths. It follows nothing (`O_NOFOLLOW`, `O_EXCL` on every create).
 * - Durability stays the commit's: one `syncfs` after `drain`, which resolves only once every
 *   object put is placed. A crash leaves temporaries and unreferenced objects, as before.
 * - Backpressure: at most `MAX_BATCHES` batches (of up to 64 objects, 512 KiB) are in flight;
 *   the walk awaits `room()` before its next store. The worker hands each batch's memory back
 *   for the next one, so the batches of a walk are a fixed 2.5 MiB, however many objects pass.
 * - A failure (a full disk, a read-only archive) stops the worker at the object that failed; it
 *   comes back typed (`classifyStorageError`, naming the object's path) from the next `room()` or
 *   from `drain()`, and the persist fails as if the walk had placed the object itself.
 * - One id is put once per writer: a second file with the same content is not sent again.
 */
import { Worker } from 'node:worker_threads';
import { classifyStorageError } from '../errors/classify-storage-error.js';
import { packFiles } from './pack-file.js';
import { MAX_PACKED_OBJECT_BYTES, PackIndex, packIndexBytes } from './pack-index.js';
import type { PackSet } from './pack-set.js';
import type { StoredObject } from './object-store.js';
import { sha256 } from './tree-object.js';

const BATCH_OBJECTS = 64;
const BATCH_BYTES = 512 * 1024;
/**
 * Batches sent and not yet placed, at most (a walk far ahead of the disk waits). With
 * BATCH_BYTES, 2.5 MiB of batches exist at most; 8 of 1 MiB were no faster (BENCHMARKS.md).
 */
const MAX_BATCHES = 4;
/**
 * The worker's own heap, kept small: it holds a few hundred strings (its fanout directories) and
 * a batch's short-lived paths; its default limits let it grow a young generation of tens of MB.
 */
const WORKER_LIMITS = { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 24, stackSizeMb: 1 };

/**
 * The worker: plain JavaScript (run with `eval`, so it runs the same from the sources and the
 * build). With `packsDir`, the objects of a batch not stored loose already go into one pack
 * (pack-file.ts's protocol: temporaries, the pack renamed in first, its index last; the index
 * encoded by pack-index.ts's own encoder, whose source it runs).
 */
const WORKER_SOURCE = `
'use strict';
const fs = require('node:fs');
const { createHash } = require('node:crypto');
const { parentPort, workerData } = require('node:worker_threads');
const { objectsDir, tmpNames, objectMode, packsDir, maxPacked } = workerData;
const packIndexBytes = ${packIndexBytes.toString()};
const PACK_MAGIC = Buffer.from('FLEETPK1');
let packsReady = false;
// Writes the objects of data at spans (pairs of offset, length) named ids as one pack; its id and index.
function writePack(data, ids, spans) {
  if (!packsReady) {
    fs.mkdirSync(packsDir, { recursive: true, mode: 0o700 });
    packsReady = true;
  }
  const offsets = [];
  const lengths = [];
  let at = PACK_MAGIC.length;
  for (let i = 0; i < ids.length; i++) {
    offsets.push(at);
    lengths.push(spans[2 * i + 1]);
    at += spans[2 * i + 1];
  }
  const index = packIndexBytes(ids, offsets, lengths, at, (body) => createHash('sha256').update(body).digest());
  const packId = index.toString('hex', index.length - 32);
  const tmp = tmpNames + (count++).toString(36);
  try {
    let fd = fs.openSync(tmp + '.pack', CREATE, objectMode);
    try {
      fs.writeSync(fd, PACK_MAGIC);
      for (let i = 0; i < ids.length; i++) for (let done = 0; done < spans[2 * i + 1]; ) done += fs.writeSync(fd, data, spans[2 * i] + done, spans[2 * i + 1] - done);
    } finally {
      fs.closeSync(fd);
    }
    fd = fs.openSync(tmp + '.idx', CREATE, objectMode);
    try {
      for (let done = 0; done < index.length; ) done += fs.writeSync(fd, index, done, index.length - done);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp + '.pack', packsDir + '/' + packId + '.pack');
    fs.renameSync(tmp + '.idx', packsDir + '/' + packId + '.idx');
  } catch (error) {
    for (const suffix of ['.pack', '.idx']) {
      try { fs.unlinkSync(tmp + suffix); } catch {}
    }
    error.target = packsDir + '/' + packId + '.pack';
    throw error;
  }
  return { packId, index };
}
const CREATE = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW;
const fanouts = new Set();
let count = 0;
let failed = false;
parentPort.on('message', ({ seq, buffer, ids, spans }) => {
  if (failed) return parentPort.postMessage({ seq, skipped: true, buffer }, [buffer]);
  const data = Buffer.from(buffer);
  let written = 0;
  let writtenBytes = 0;
  let target = '';
  let tmp = null;
  const packIds = [];
  const packSpans = [];
  try {
    for (let i = 0; i < spans.length / 2; i++) {
      const id = ids.slice(64 * i, 64 * i + 64);
      const offset = spans[2 * i];
      const length = spans[2 * i + 1];
      const dir = objectsDir + '/' + id.slice(0, 2);
      target = dir + '/' + id;
      if (fs.statSync(target, { throwIfNoEntry: false }) !== undefined) {
        try {
          const now = Date.now() / 1000;
          fs.utimesSync(target, now, now);
          continue;
        } catch (error) {
          if (error.code !== 'ENOENT') throw error;
        }
      }
      if (packsDir && length <= maxPacked) {
        packIds.push(id);
        packSpans.push(offset, length);
        continue;
      }
      if (!fanouts.has(dir)) {
        fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
        fanouts.add(dir);
      }
      tmp = tmpNames + (count++).toString(36);
      const fd = fs.openSync(tmp, CREATE, objectMode);
      try {
        for (let done = 0; done < length; ) done += fs.writeSync(fd, data, offset + done, length - done);
      } finally {
        fs.closeSync(fd);
      }
      fs.renameSync(tmp, target);
      tmp = null;
      written += 1;
      writtenBytes += length;
    }
    if (packIds.length > 0) {
      const { packId, index } = writePack(data, packIds, packSpans);
      written += packIds.length;
      for (let i = 1; i < packSpans.length; i += 2) writtenBytes += packSpans[i];
      const indexBuffer = index.buffer.slice(index.byteOffset, index.byteOffset + index.length);
      return parentPort.postMessage({ seq, written, writtenBytes, buffer, pack: { packId, index: indexBuffer } }, [buffer, indexBuffer]);
    }
    parentPort.postMessage({ seq, written, writtenBytes, buffer }, [buffer]);
  } catch (error) {
    failed = true;
    if (tmp !== null) {
      try { fs.unlinkSync(tmp); } catch {}
    }
    parentPort.postMessage({ seq, written, writtenBytes, buffer, failure: { code: error.code, errno: error.errno, syscall: error.syscall, message: error.message, target: error.target || target } }, [buffer]);
  }
});
`;

interface WorkerReply {
  readonly seq: number;
  readonly written?: number;
  readonly writtenBytes?: number;
  readonly skipped?: boolean;
  /** The batch's memory, handed back for the next batch. */
  readonly buffer: ArrayBuffer;
  readonly failure?: { readonly code?: string; readonly errno?: number; readonly syscall?: string; readonly message: string; readonly target: string };
  /** The pack the batch was written as (packs only), with its index's bytes. */
  readonly pack?: { readonly packId: string; readonly index: ArrayBuffer };
}

export interface ObjectWriterOptions {
  /** `{root}/.store/objects`. */
  readonly objectsDir: string;
  /**
   * The path its temporaries start with, a count following (in `{root}/.store/tmp`, which exists;
   * `storeTempPrefix`: unique among the archive's writers, and recognised as litter).
   */
  readonly tmpNames: string;
  readonly objectMode: number;
  /** Write each batch as a pack into this store's packs (`{root}/.store/packs`), not as files. */
  readonly packs?: PackSet;
  /** Each placed batch: objects this writer wrote (not found stored) and their bytes. */
  readonly onWritten?: (objects: number, bytes: number) => void;
}

export class ObjectWriter {
  /** Largest object `put` takes (a batch's size). */
  static readonly MAX_OBJECT_BYTES = BATCH_BYTES;
  readonly #worker: Worker;
  readonly #onWritten: ObjectWriterOptions['onWritten'];
  readonly #packs: PackSet | null;
  readonly #queued = new Set<string>();
  /** Batch memory handed back by the worker, for the next batches (at most MAX_BATCHES + 1 ever exist). */
  readonly #free: ArrayBuffer[] = [];
  #batchMemory = 0;
  #batch = this.#newBatch();
  #seq = 0;
  #inFlight = 0;
  #failure: Error | null = null;
  #online = false;
  /** Settles when the thread runs, or fails before it does. */
  readonly #started: Promise<void>;
  #startFailed: (error: Error) => void = () => undefined;
  /** Waiters for room (or for the last batch): woken on every reply. */
  #waiters: (() => void)[] = [];

  constructor(options: ObjectWriterOptions) {
    this.#onWritten = options.onWritten;
    this.#packs = options.packs ?? null;
    this.#worker = new Worker(WORKER_SOURCE, {
      eval: true,
      resourceLimits: WORKER_LIMITS,
      workerData: { objectsDir: options.objectsDir, tmpNames: options.tmpNames, objectMode: options.objectMode, packsDir: this.#packs?.packsDir ?? null, maxPacked: MAX_PACKED_OBJECT_BYTES },
    });
    this.#started = new Promise<void>((resolve, reject) => {
      this.#startFailed = reject;
      this.#worker.once('online', () => {
        this.#online = true;
        resolve();
      });
    });
    // Its failure reaches whoever waits for it (whenOnline), and the walk through room/drain otherwise.
    this.#started.catch(() => undefined);
    this.#worker.on('message', (reply: WorkerReply) => this.#reply(reply));
    this.#worker.on('error', (error) => this.#fail(error));
    this.#worker.on('exit', (code) => {
      if (this.#inFlight > 0) this.#fail(new Error(`the object writer thread exited (${code}) with ${this.#inFlight} batches unplaced`));
    });
  }

  /** Queues `bytes` (copied) to be placed under their id; `written` is counted through `onWritten`. */
  put(bytes: Buffer): StoredObject {
    const id = sha256(bytes);
    if (this.#queued.has(id)) return { id, bytes: bytes.length, written: false };
    this.#queued.add(id);
    // Packed already (by this process or another it has listed): the pack is refreshed for the GC, once per writer.
    const packed = this.#packs?.find(id);
    if (packed && this.#packs!.reuse(packed.index.packId)) return { id, bytes: bytes.length, written: false };
    if (bytes.length > BATCH_BYTES) throw new RangeError(`object of ${bytes.length} bytes is over the writer's ${BATCH_BYTES}-byte batch`);
    let batch = this.#batch;
    if (batch.count === BATCH_OBJECTS || batch.used + bytes.length > BATCH_BYTES) {
      this.send();
      batch = this.#batch;
    }
    bytes.copy(batch.bytes, batch.used);
    batch.ids.push(id);
    batch.spans[2 * batch.count] = batch.used;
    batch.spans[2 * batch.count + 1] = bytes.length;
    batch.count += 1;
    batch.used += bytes.length;
    return { id, bytes: bytes.length, written: false };
  }

  /** Sends the batch being filled, if any. */
  send(): void {
    const { bytes, spans, ids, count } = this.#batch;
    if (count === 0) return;
    // The batch's bytes and spans move to the worker (transferred, not copied); its ids go as one string.
    const moved = spans.subarray(0, 2 * count).slice();
    this.#worker.postMessage({ seq: this.#seq++, buffer: bytes.buffer, ids: ids.join(''), spans: moved }, [bytes.buffer, moved.buffer]);
    this.#inFlight += 1;
    this.#batch = this.#newBatch();
  }

  /**
   * A batch's memory: one the worker handed back, else a new ArrayBuffer of its own (never Node's
   * shared pool: it is transferred whole; not zeroed: only what was copied in is sent). Reused,
   * because a transferred buffer is freed only when the worker's heap is next collected, which its
   * few allocations put off: a new one per batch raised the peak RSS of a process putting 20,000
   * objects from 106 to 175 MB (BENCHMARKS.md).
   */
  #newBatch() {
    const memory = this.#free.pop();
    if (!memory) this.#batchMemory += BATCH_BYTES;
    const bytes = memory ? Buffer.from(memory) : Buffer.allocUnsafeSlow(BATCH_BYTES);
    return { bytes, used: 0, count: 0, ids: [] as string[], spans: new Int32Array(2 * BATCH_OBJECTS) };
  }

  /** Bytes of batch memory this writer has made (reused after that): at most `(MAX_BATCHES + 1) × BATCH_BYTES`. */
  get batchMemory(): number {
    return this.#batchMemory;
  }

  /**
   * Whether the thread has started running (it takes 25-35 ms on 2 busy cores): until then the
   * caller may place objects itself rather than queue batches nobody takes yet.
   */
  get online(): boolean {
    return this.#online;
  }

  /** Resolves once the thread runs; rejects when it failed before it did. */
  whenOnline(): Promise<void> {
    return this.#started;
  }

  /** Whether the walk should wait (`room`) before putting more. */
  get congested(): boolean {
    return this.#inFlight >= MAX_BATCHES || this.#failure !== null;
  }

  /** Resolves once fewer than MAX_BATCHES are in flight; rejects with the worker's failure. */
  async room(): Promise<void> {
    while (this.#failure === null && this.#inFlight >= MAX_BATCHES) await new Promise<void>((resolve) => this.#waiters.push(resolve));
    if (this.#failure) throw this.#failure;
  }

  /** Resolves once every object put is placed; rejects with the worker's failure. */
  async drain(): Promise<void> {
    this.send();
    while (this.#failure === null && this.#inFlight > 0) await new Promise<void>((resolve) => this.#waiters.push(resolve));
    if (this.#failure) throw this.#failure;
  }

  /** Stops the worker (what it was placing may be left as a temporary: litter, as after a crash). */
  async close(): Promise<void> {
    this.#inFlight = 0;
    await this.#worker.terminate();
    this.#wake();
  }

  #reply(reply: WorkerReply): void {
    this.#inFlight -= 1;
    this.#free.push(reply.buffer);
    if (reply.pack && this.#packs) {
      const { packId, index } = reply.pack;
      this.#packs.add(PackIndex.decode(Buffer.from(index), packFiles(this.#packs.packsDir, packId).index, packId));
    }
    if (reply.written) this.#onWritten?.(reply.written, reply.writtenBytes ?? 0);
    if (reply.failure) {
      const { code, errno, syscall, message, target } = reply.failure;
      const cause = Object.assign(new Error(message), { code, errno, syscall, path: target });
      this.#fail(classifyStorageError(cause, 'store object', target));
    }
    this.#wake();
  }

  #fail(error: Error): void {
    this.#failure ??= error;
    this.#startFailed(error);
    this.#wake();
  }

  #wake(): void {
    for (const wake of this.#waiters.splice(0)) wake();
  }
}
