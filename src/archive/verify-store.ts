/**
 * Format 2's content check for `fleet verify`: from a revision's root, every reachable tree is
 * read from disk and must hash to its id and decode; every reachable object must exist as a
 * file of the size its trees give and, when picked for reading, hash to its id. Each distinct
 * tree and object is checked once per run (revisions and workspaces share them); what a tree
 * holds wrong is remembered with it, so every revision reaching it is told, by path.
 */
import { errnoOf } from '../errors/classify-storage-error.js';
import { Semaphore } from '../lib/semaphore.js';
import { hashFileData } from '../tree/hash-file-data.js';
import type { ObjectStore } from './object-store.js';
import { TreeFormatError, type TreeNode } from './tree-object.js';
import { encodePath } from './tree-walk.js';

/** Filesystem calls at once (tree reads, object stats and reads). */
const IO_CONCURRENCY = 8;

export const STORE_PROBLEMS = ['tree-missing', 'tree-corrupt', 'object-missing', 'object-corrupt'] as const;
export type StoreProblem = (typeof STORE_PROBLEMS)[number];

/** One thing wrong below a tree: what, which id, where (relative to that tree; '' for the tree itself), and why. */
export interface StoreFinding {
  readonly problem: StoreProblem;
  readonly id: string;
  readonly path: string;
  readonly detail: string;
}

// What is wrong with one object.
type ObjectVerdict = { readonly problem: StoreProblem; readonly detail: string } | null;

export interface StoreCheckStats {
  trees: number;
  objects: number;
  /** Objects whose bytes were read and hashed. */
  objectsRead: number;
  bytesRead: number;
}

export interface StoreCheckOptions {
  /** Whether an object's bytes are read and hashed (otherwise only its existence and size are checked). */
  readonly readData: (id: string) => boolean;
  readonly signal?: AbortSignal;
}

const NONE: readonly StoreFinding[] = Object.freeze([]);

export class StoreChecker {
  readonly stats: StoreCheckStats = { trees: 0, objects: 0, objectsRead: 0, bytesRead: 0 };
  readonly #trees = new Map<string, Promise<readonly StoreFinding[]>>();
  readonly #objects = new Map<string, Promise<ObjectVerdict>>();
  readonly #io = new Semaphore(IO_CONCURRENCY);

  constructor(
    private readonly store: ObjectStore,
    private readonly options: StoreCheckOptions,
  ) {}

  /** What is wrong below the tree `root` (paths relative to it; empty when all is well). */
  check(root: string): Promise<readonly StoreFinding[]> {
    let found = this.#trees.get(root);
    if (!found) {
      found = this.#checkTree(root);
      this.#trees.set(root, found);
    }
    return found;
  }

  async #checkTree(id: string): Promise<readonly StoreFinding[]> {
    this.options.signal?.throwIfAborted();
    let nodes: TreeNode[];
    try {
      nodes = (await this.#io.run(() => this.store.loadTree(id))).nodes;
    } catch (error) {
      if (errnoOf(error) === 'ENOENT') return [{ problem: 'tree-missing', id, path: '', detail: `tree ${id} does not exist` }];
      if (error instanceof TreeFormatError) return [{ problem: 'tree-corrupt', id, path: '', detail: error.message }];
      if (errnoOf(error)) return [{ problem: 'tree-corrupt', id, path: '', detail: `tree ${id} cannot be read (${errnoOf(error)})` }];
      throw error;
    }
    this.stats.trees += 1;
    const below = await Promise.all(
      nodes.map(async (node): Promise<readonly StoreFinding[]> => {
        const name = encodePath(node.name);
        if (node.type === 'd') return prefixed(name, await this.check(node.tree));
        if (node.type !== 'f') return NONE;
        const wrong = await this.#checkObject(node.object, node.size);
        return wrong ? [{ ...wrong, id: node.object, path: name }] : NONE;
      }),
    );
    const all = below.flat();
    return all.length === 0 ? NONE : all;
  }

  // What is wrong with an object, or null when it is as its trees say.
  #checkObject(id: string, size: number): Promise<ObjectVerdict> {
    const key = `${id}:${size}`;
    let verdict = this.#objects.get(key);
    if (!verdict) {
      verdict = this.#io.run(() => this.#inspectObject(id, size));
      this.#objects.set(key, verdict);
    }
    return verdict;
  }

  async #inspectObject(id: string, size: number): Promise<ObjectVerdict> {
    this.options.signal?.throwIfAborted();
    const corrupt = (why: string): ObjectVerdict => ({ problem: 'object-corrupt', detail: `object ${id} ${why}` });
    // Its own file, or its slot in a pack.
    let stored;
    try {
      stored = await this.store.objectSize(id);
    } catch (error) {
      if (errnoOf(error) === 'EFTYPE') return corrupt('is not a regular file');
      if (errnoOf(error)) return corrupt(`cannot be read (${errnoOf(error)})`);
      throw error;
    }
    if (stored === undefined) return { problem: 'object-missing', detail: `object ${id} does not exist` };
    this.stats.objects += 1;
    if (stored !== size) return corrupt(`has ${stored} bytes, its tree says ${size}`);
    if (!this.options.readData(id)) return null;
    let read;
    try {
      const handle = await this.store.openObject(id);
      try {
        read = await hashFileData(handle, Number.POSITIVE_INFINITY, this.options.signal);
      } finally {
        await handle.close();
      }
    } catch (error) {
      if (errnoOf(error)) return corrupt(`cannot be read (${errnoOf(error)})`);
      throw error;
    }
    this.stats.objectsRead += 1;
    this.stats.bytesRead += read.bytes;
    if (read.bytes !== size) return corrupt(`gave ${read.bytes} bytes, its tree says ${size}`);
    return read.hash === id ? null : corrupt(`does not match its content (its bytes hash to ${read.hash})`);
  }
}

// Findings of a subdirectory, as seen from its parent.
function prefixed(name: string, findings: readonly StoreFinding[]): readonly StoreFinding[] {
  if (findings.length === 0) return NONE;
  return findings.map((f) => ({ ...f, path: f.path === '' ? name : `${name}/${f.path}` }));
}
