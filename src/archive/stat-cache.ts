/**
 * The host-side stat cache of a live tree (format 2): what each file's lstat was when its object
 * was last known (size, stored mode, mtime, ctime, inode), so the next persist reuses the object
 * without opening the file, and a same-size rewrite whose mtime was put back (`touch -d`) is still
 * seen (its ctime moved). It belongs to one revision (the one it was written for) and one live
 * tree (its root directory's device, inode and birth time: a restore makes a new root) and is ignored for
 * any other. It is only a hint: the builder accepts a cached object only when the previous
 * revision has that very object at that path, so a damaged or planted cache can make a persist
 * hash more, never archive a content the tree does not have. Not fsynced: a lost cache costs one
 * persist without the ctime and inode check (size, mode and mtime against the revision still
 * decide), never a full re-read.
 *
 * On disk: a snapshot (`stat-cache.json`, one JSON document) and a log beside it
 * (`stat-cache.json.log`), one line per later revision with only what changed since the one
 * before (`StatCacheDelta`), so a persist that changed 1 % of a 100,000-file tree writes about
 * 1 % of the cache, not all 17 MB of it. Reading applies the log's lines in order while each
 * follows from the revision reached so far; a torn last line (a crash mid-append) ends the chain
 * there, and a cache that did not reach the revision asked for is ignored, as a lost one.
 */
import { randomBytes } from 'node:crypto';
import { appendFile, open, readFile, rename, rm } from 'node:fs/promises';
import { OBJECT_ID_PATTERN } from './tree-object.js';

export interface StatCacheEntry {
  /** Encoded path (like manifest paths). */
  readonly path: string;
  readonly size: number;
  readonly mode: number;
  readonly mtimeNs: bigint;
  readonly ctimeNs: bigint;
  readonly ino: bigint;
  readonly object: string;
}

export type StatCache = ReadonlyMap<string, StatCacheEntry>;

/**
 * What the walk that wrote a cache was: `exact` when its revision is the live tree as that walk
 * found it, nothing kept that the tree lacked and nothing refused (so a directory unchanged since
 * may be taken from it by id, see changed-dirs.ts); `fullWalkAt` when the last walk of every
 * directory of this tree was (ms since the epoch; a walk that took directories by id carries it on);
 * `dirs`, the identity (`<dev>:<ino>`) of each directory below the root at the path it recorded
 * (a directory found there again under that identity is the one it recorded, or one made since
 * the walk, whose every entry is younger than it: store-builder.ts `Frame.recorded`);
 * `changedAfterNs`, the line the walk drew (change-stamp.ts; null in a cache written before
 * lines were recorded: the revision record's `scanStartedAt` then gives it), and `exactLine`,
 * whether it is the filesystem's own stamp from a walk that met no other device.
 */
export interface ScanFacts {
  readonly exact: boolean;
  readonly fullWalkAt: number;
  readonly dirs: ReadonlyMap<string, string>;
  readonly changedAfterNs: bigint | null;
  readonly exactLine: boolean;
}

/** A cache with the facts of the walk that wrote it. */
export interface LoadedStatCache {
  readonly entries: StatCache;
  readonly facts: ScanFacts;
}

/** Facts of a cache written before they were recorded: nothing may be taken by id from it. */
export const NO_FACTS: ScanFacts = Object.freeze({ exact: false, fullWalkAt: 0, dirs: new Map<string, string>(), changedAfterNs: null, exactLine: false });

/** A directory's identity as `dirs` records it. */
export const dirIdentity = (stats: { readonly dev: bigint; readonly ino: bigint }): string => `${stats.dev}:${stats.ino}`;

const DIR_IDENTITY = /^\d{1,25}:\d{1,25}$/;

// The `dirs` rows of a cache file; null when any is malformed (then nothing is recorded).
function dirsOf(rows: unknown): Map<string, string> | null {
  if (!Array.isArray(rows)) return null;
  const dirs = new Map<string, string>();
  for (const row of rows) {
    if (!Array.isArray(row) || row.length !== 2 || typeof row[0] !== 'string' || typeof row[1] !== 'string' || !DIR_IDENTITY.test(row[1])) return null;
    dirs.set(row[0], row[1]);
  }
  return dirs;
}

const VERSION = 1;

// One cache row back into an entry; null for anything malformed.
function entryOf(row: unknown): StatCacheEntry | null {
  if (!Array.isArray(row) || row.length !== 7) return null;
  const [path, size, mode, mtime, ctime, ino, object] = row as unknown[];
  const time = (v: unknown) => typeof v === 'string' && /^\d{1,25}$/.test(v);
  if (typeof path !== 'string' || !Number.isSafeInteger(size) || !Number.isInteger(mode) || !time(mtime) || !time(ctime) || !time(ino) || typeof object !== 'string' || !OBJECT_ID_PATTERN.test(object)) return null;
  return { path, size: size as number, mode: mode as number, mtimeNs: BigInt(mtime as string), ctimeNs: BigInt(ctime as string), ino: BigInt(ino as string), object };
}

/**
 * Which live tree a cache describes: its root directory. The birth time tells a root made again
 * under a freed inode number (a destroy and a restore in a row, on ext4) from the one the cache
 * was written for; where the filesystem keeps none (0), device and inode decide alone.
 */
export interface TreeIdentity {
  readonly dev: bigint;
  readonly ino: bigint;
  readonly birthtimeNs?: bigint;
}

/** A tree identity as the cache records it. */
export const identityOf = (tree: TreeIdentity) => (tree.birthtimeNs ? `${tree.dev}:${tree.ino}:${tree.birthtimeNs}` : `${tree.dev}:${tree.ino}`);

/** The log of later revisions beside the cache file `file`. */
export const statCacheLog = (file: string): string => `${file}.log`;
/** The marker a walk of the tree touches to draw its line (change-stamp.ts). */
export const statCacheMarker = (file: string): string => `${file}.line`;
/** Every file of the cache at `file`: what removing the cache removes. */
export const statCacheFiles = (file: string): readonly string[] => [file, statCacheLog(file), statCacheMarker(file)];

type LineFacts = Pick<ScanFacts, 'changedAfterNs' | 'exactLine'>;
// The line as the cache writes it (`changedAfter` digits, `exactLine`); none when absent or malformed.
function lineFactsOf(body: { readonly changedAfter?: unknown; readonly exactLine?: unknown }): LineFacts {
  const ns = typeof body.changedAfter === 'string' && /^\d{1,25}$/.test(body.changedAfter) ? BigInt(body.changedAfter) : null;
  return { changedAfterNs: ns, exactLine: ns !== null && body.exactLine === true };
}
const lineFields = (facts: LineFacts): string => (facts.changedAfterNs === null ? '' : `,"changedAfter":"${facts.changedAfterNs}","exactLine":${facts.exactLine}`);

/**
 * The cache at `file` (its snapshot, then its log) when it reaches `revision` for this tree; null
 * when absent, unreadable or another's.
 */
export async function loadStatCache(file: string, revision: string, tree: TreeIdentity): Promise<LoadedStatCache | null> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(file, 'utf8'));
  } catch {
    return null;
  }
  const body = raw as { v?: unknown; revision?: unknown; tree?: unknown; entries?: unknown; exact?: unknown; fullWalkAt?: unknown; dirs?: unknown; changedAfter?: unknown; exactLine?: unknown };
  const identity = identityOf(tree);
  if (body?.v !== VERSION || typeof body.revision !== 'string' || body.tree !== identity || !Array.isArray(body.entries)) return null;
  const cache = new Map<string, StatCacheEntry>();
  for (const row of body.entries) {
    const entry = entryOf(row);
    if (entry) cache.set(entry.path, entry);
  }
  // A cache written before directories were recorded has none: its walk's facts stand, no directory below the root is recorded.
  const dirs = body.dirs === undefined ? new Map<string, string>() : dirsOf(body.dirs);
  let exact = body.exact === true && Number.isSafeInteger(body.fullWalkAt);
  let fullWalkAt = exact ? (body.fullWalkAt as number) : 0;
  let walkLine = lineFactsOf(body);
  let reached = body.revision;
  // The log's complete lines, each from the revision reached so far, up to the one asked for (and
  // any later line for that same revision: a walk that found nothing new still moves its facts).
  const lines = (await readFile(statCacheLog(file), 'utf8').catch(() => '')).split('\n');
  lines.pop();
  for (const line of lines) {
    const delta = deltaOf(line, identity);
    if (!delta || delta.from !== reached || (reached === revision && delta.revision !== revision)) break;
    for (const path of delta.removed) cache.delete(path);
    for (const entry of delta.set) cache.set(entry.path, entry);
    for (const path of delta.dirsRemoved) dirs?.delete(path);
    for (const [path, at] of delta.dirsSet) dirs?.set(path, at);
    exact = delta.exact;
    fullWalkAt = delta.fullWalkAt;
    walkLine = { changedAfterNs: delta.changedAfterNs, exactLine: delta.exactLine };
    reached = delta.revision;
  }
  if (reached !== revision) return null;
  const facts: ScanFacts = exact && dirs ? { exact: true, fullWalkAt, dirs, ...walkLine } : NO_FACTS;
  return { entries: cache, facts };
}

/** What one revision's cache changed from the one before it (a line of the log). */
export interface StatCacheDelta {
  /** The revision the line follows from (the one reached before it). */
  readonly from: string;
  readonly revision: string;
  readonly exact: boolean;
  readonly fullWalkAt: number;
  readonly changedAfterNs: bigint | null;
  readonly exactLine: boolean;
  readonly set: readonly StatCacheEntry[];
  readonly removed: readonly string[];
  readonly dirsSet: readonly (readonly [string, string])[];
  readonly dirsRemoved: readonly string[];
}

/**
 * What changed from the cache `before` to `after` (no I/O): entries and directories added or
 * different, and those gone. Entries are compared by value, so an entry re-made unchanged costs
 * nothing.
 */
export function statCacheDelta(before: LoadedStatCache, after: LoadedStatCache): Pick<StatCacheDelta, 'set' | 'removed' | 'dirsSet' | 'dirsRemoved'> {
  const set: StatCacheEntry[] = [];
  for (const [path, entry] of after.entries) if (!sameEntry(before.entries.get(path), entry)) set.push(entry);
  const removed = [...before.entries.keys()].filter((path) => !after.entries.has(path));
  const dirsSet = [...after.facts.dirs].filter(([path, identity]) => before.facts.dirs.get(path) !== identity);
  const dirsRemoved = [...before.facts.dirs.keys()].filter((path) => !after.facts.dirs.has(path));
  return { set, removed, dirsSet, dirsRemoved };
}

function sameEntry(a: StatCacheEntry | undefined, b: StatCacheEntry): boolean {
  return a === b || (a !== undefined && a.size === b.size && a.mode === b.mode && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs && a.ino === b.ino && a.object === b.object);
}

/** A log line: the delta from `from` to `revision` of this tree, with that revision's walk facts. */
export function encodeStatCacheDelta(tree: TreeIdentity, delta: StatCacheDelta): string {
  return `${JSON.stringify({
    v: VERSION,
    tree: identityOf(tree),
    from: delta.from,
    revision: delta.revision,
    exact: delta.exact,
    fullWalkAt: Math.trunc(delta.fullWalkAt),
    ...(delta.changedAfterNs === null ? {} : { changedAfter: delta.changedAfterNs.toString(), exactLine: delta.exactLine }),
    set: delta.set.map(rowOf),
    removed: delta.removed,
    dirsSet: delta.dirsSet,
    dirsRemoved: delta.dirsRemoved,
  })}\n`;
}

/** Appends encoded lines to the log of `file` (not fsynced: the cache is a hint). */
export async function appendStatCacheLog(file: string, lines: string): Promise<void> {
  await appendFile(statCacheLog(file), lines, { mode: 0o600 });
}

// One log line back into a delta of this tree; null for anything malformed or another tree's.
function deltaOf(line: string, identity: string): StatCacheDelta | null {
  let body: { v?: unknown; tree?: unknown; from?: unknown; revision?: unknown; exact?: unknown; fullWalkAt?: unknown; changedAfter?: unknown; exactLine?: unknown; set?: unknown; removed?: unknown; dirsSet?: unknown; dirsRemoved?: unknown };
  try {
    body = JSON.parse(line) as typeof body;
  } catch {
    return null;
  }
  if (body?.v !== VERSION || body.tree !== identity || typeof body.from !== 'string' || typeof body.revision !== 'string' || typeof body.exact !== 'boolean' || !Number.isSafeInteger(body.fullWalkAt)) return null;
  if (!Array.isArray(body.set) || !Array.isArray(body.removed) || !Array.isArray(body.dirsRemoved) || !body.removed.every((p) => typeof p === 'string') || !body.dirsRemoved.every((p) => typeof p === 'string')) return null;
  const set = body.set.map(entryOf);
  const dirsSet = dirsOf(body.dirsSet);
  if (set.some((e) => e === null) || !dirsSet) return null;
  return {
    from: body.from,
    revision: body.revision,
    exact: body.exact,
    fullWalkAt: body.fullWalkAt as number,
    ...lineFactsOf(body),
    set: set as StatCacheEntry[],
    removed: body.removed as string[],
    dirsSet: [...dirsSet],
    dirsRemoved: body.dirsRemoved as string[],
  };
}

// An entry as a cache row (the snapshot's and the log's).
function rowOf(e: StatCacheEntry): unknown[] {
  return [e.path, e.size, e.mode, e.mtimeNs.toString(), e.ctimeNs.toString(), e.ino.toString(), e.object];
}

/** Rows encoded and written at once (a 100,000-file cache never blocks the event loop in one piece). */
const ROWS_PER_WRITE = 4_096;

/**
 * Writes the cache snapshot for `revision` (temporary file, then rename), a few thousand rows at
 * a time, then removes the log (its lines follow from earlier revisions). Returns the bytes written.
 */
export async function saveStatCache(file: string, revision: string, tree: TreeIdentity, entries: StatCache, facts: ScanFacts = NO_FACTS): Promise<number> {
  const tmp = `${file}.tmp-${randomBytes(4).toString('hex')}`;
  const out = await open(tmp, 'wx', 0o600);
  let closed = false;
  let bytes = 0;
  const write = async (text: string) => {
    bytes += (await out.write(text)).bytesWritten;
  };
  try {
    await write(`{"v":${VERSION},"revision":${JSON.stringify(revision)},"tree":${JSON.stringify(identityOf(tree))},"exact":${facts.exact},"fullWalkAt":${Math.trunc(facts.fullWalkAt)}${lineFields(facts)},"entries":[`);
    let rows: string[] = [];
    let first = true;
    const flush = async () => {
      await write(`${first ? '' : ','}${rows.join(',')}`);
      first = false;
      rows = [];
    };
    for (const e of entries.values()) {
      rows.push(JSON.stringify(rowOf(e)));
      if (rows.length === ROWS_PER_WRITE) await flush();
    }
    if (rows.length > 0) await flush();
    await write(`],"dirs":${JSON.stringify([...facts.dirs])}}`);
    closed = true;
    await out.close();
    await rename(tmp, file);
    await rm(statCacheLog(file), { force: true });
    return bytes;
  } catch (error) {
    if (!closed) await out.close().catch(() => undefined);
    await rm(tmp, { force: true });
    throw error;
  }
}
