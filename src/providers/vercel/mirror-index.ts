/**
 * What a mirror holds, written by the fleet after every update: for each regular file whose
 * content the mirror has for certain, the sandbox's listing of the version it holds (size, mode,
 * mtime, ctime, inode, device) and the mirror copy's own inode and ctime. A file is taken as
 * unchanged (not transferred) only when the new listing and the mirror copy both still match.
 *
 * It belongs to one sandbox (its name) and one boot of this host: it is not fsynced, so after
 * a crash of the host the mirror's data may be older than its index; another boot's index is
 * ignored and the mirror is rebuilt by a full transfer. An index that is absent, damaged or
 * another sandbox's is ignored the same way. Keys are the raw path bytes as latin1 strings.
 */
import { randomBytes } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import type { ListedEntry } from './parse-listing.js';

export type ListedVersion = Pick<ListedEntry, 'size' | 'mode' | 'mtimeNs' | 'ctimeNs' | 'ino' | 'dev'>;

export interface MirroredFile {
  /** The sandbox's listing of the version the mirror holds. */
  readonly listed: ListedVersion;
  /** The mirror copy's inode and ctime when it was written (anything else touched it since). */
  readonly mirrorIno: bigint;
  readonly mirrorCtimeNs: bigint;
}

export type MirrorIndex = ReadonlyMap<string, MirroredFile>;

/** Whose mirror it is. */
export interface MirrorOwner {
  readonly sandbox: string;
  readonly boot: string;
}

const VERSION = 1;
const DIGITS = /^-?\d{1,25}$/;

// One row back into a file; null for anything malformed.
function fileOf(row: unknown): [string, MirroredFile] | null {
  if (!Array.isArray(row) || row.length !== 9 || typeof row[0] !== 'string') return null;
  const [key, size, mode, ...times] = row as [string, unknown, unknown, ...unknown[]];
  if (!Number.isSafeInteger(size) || !Number.isInteger(mode) || !times.every((t) => typeof t === 'string' && DIGITS.test(t))) return null;
  const [mtime, ctime, ino, dev, mirrorIno, mirrorCtime] = (times as string[]).map(BigInt) as [bigint, bigint, bigint, bigint, bigint, bigint];
  return [key, { listed: { size: size as number, mode: mode as number, mtimeNs: mtime, ctimeNs: ctime, ino, dev }, mirrorIno, mirrorCtimeNs: mirrorCtime }];
}

/** The index at `file` if `owner` wrote it; null when absent, unreadable or someone else's. */
export async function loadMirrorIndex(file: string, owner: MirrorOwner): Promise<MirrorIndex | null> {
  let body: { v?: unknown; sandbox?: unknown; boot?: unknown; files?: unknown };
  try {
    body = JSON.parse(await readFile(file, 'utf8')) as typeof body;
  } catch {
    return null;
  }
  if (body?.v !== VERSION || body.sandbox !== owner.sandbox || body.boot !== owner.boot || !Array.isArray(body.files)) return null;
  const files = new Map<string, MirroredFile>();
  for (const row of body.files) {
    const file = fileOf(row);
    if (file === null) return null;
    files.set(...file);
  }
  return files;
}

/** The sandbox an index at `file` names, whatever its boot (null when there is none). */
export async function indexedSandbox(file: string): Promise<string | null> {
  try {
    const body = JSON.parse(await readFile(file, 'utf8')) as { sandbox?: unknown };
    return typeof body?.sandbox === 'string' ? body.sandbox : null;
  } catch {
    return null;
  }
}

/** Writes the index (temporary file, then rename). */
export async function saveMirrorIndex(file: string, owner: MirrorOwner, files: MirrorIndex): Promise<void> {
  const rows = [...files].map(([key, f]) => [
    key,
    f.listed.size,
    f.listed.mode,
    ...[f.listed.mtimeNs, f.listed.ctimeNs, f.listed.ino, f.listed.dev, f.mirrorIno, f.mirrorCtimeNs].map(String),
  ]);
  const tmp = `${file}.tmp-${randomBytes(4).toString('hex')}`;
  await writeFile(tmp, JSON.stringify({ v: VERSION, sandbox: owner.sandbox, boot: owner.boot, files: rows }), { mode: 0o600 });
  await rename(tmp, file);
}
