/**
 * The index of a persist without a host copy of the tree (list-tree.ts), one file per workspace
 * on the host: for each regular file, the version the sandbox listed (size, mode, mtime, ctime,
 * inode, device) and the object the revision holds for it. It names the incarnation (the handle)
 * that listed the versions and the revision they were archived in; any other incarnation or
 * revision ignores it. It is a hint: a row is believed only where that revision has that object
 * at that path (archive/listing-builder.ts), so a damaged or stale file costs transfers, never
 * content. Keys are the raw path bytes as latin1 strings.
 */
import { randomBytes } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { OBJECT_ID_PATTERN } from '../../archive/tree-object.js';
import type { ListedIndex, ListedIndexRow } from '../../archive/listing-builder.js';

const VERSION = 1;
const DIGITS = /^-?\d{1,25}$/;

/** Whose index it is: the incarnation and the revision it describes. */
export interface ListedIndexOwner {
  readonly sandbox: string;
  readonly revision: string;
}

// One row back; null for anything malformed.
function rowOf(row: unknown): [string, ListedIndexRow] | null {
  if (!Array.isArray(row) || row.length !== 8 || typeof row[0] !== 'string') return null;
  const [key, size, mode, mtime, ctime, ino, dev, object] = row as unknown[];
  if (!Number.isSafeInteger(size) || !Number.isInteger(mode) || typeof object !== 'string' || !OBJECT_ID_PATTERN.test(object)) return null;
  const times = [mtime, ctime, ino, dev];
  if (!times.every((t) => typeof t === 'string' && DIGITS.test(t))) return null;
  const [m, c, i, d] = (times as string[]).map(BigInt) as [bigint, bigint, bigint, bigint];
  return [key as string, { listed: { size: size as number, mode: mode as number, mtimeNs: m, ctimeNs: c, ino: i, dev: d }, object }];
}

/** The index at `file` if `owner` wrote it; null when absent, unreadable, malformed or someone else's. */
export async function loadListedIndex(file: string, owner: ListedIndexOwner): Promise<ListedIndex | null> {
  let body: { v?: unknown; sandbox?: unknown; revision?: unknown; files?: unknown };
  try {
    body = JSON.parse(await readFile(file, 'utf8')) as typeof body;
  } catch {
    return null;
  }
  if (body?.v !== VERSION || body.sandbox !== owner.sandbox || body.revision !== owner.revision || !Array.isArray(body.files)) return null;
  const rows = new Map<string, ListedIndexRow>();
  for (const row of body.files) {
    const parsed = rowOf(row);
    if (parsed === null) return null;
    rows.set(...parsed);
  }
  return rows;
}

/** Writes the index (temporary file, then rename). */
export async function saveListedIndex(file: string, owner: ListedIndexOwner, rows: ListedIndex): Promise<void> {
  const files = [...rows].map(([key, { listed: l, object }]) => [key, l.size, l.mode, String(l.mtimeNs), String(l.ctimeNs), String(l.ino), String(l.dev), object]);
  const tmp = `${file}.tmp-${randomBytes(4).toString('hex')}`;
  await writeFile(tmp, JSON.stringify({ v: VERSION, sandbox: owner.sandbox, revision: owner.revision, files }), { mode: 0o600 });
  await rename(tmp, file);
}
