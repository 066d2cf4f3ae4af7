// A tree with every shape an archive must carry exactly (hostile names, symlinks, FIFOs, modes,
// a sparse file, hard links, deep and long paths, a time before 1970), and a byte-exact
// description of any tree to compare an export or an extraction with its source.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmod, link, mkdir, open, symlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { encodePath, walkTree } from '../../src/archive/tree-walk.js';
import { HOSTILE_NAMES } from './hostile-tree.js';

const at = (root: string, rel: Buffer | string) => Buffer.concat([Buffer.from(`${root}/`), typeof rel === 'string' ? Buffer.from(rel) : rel]);
const BAD_UTF8 = Buffer.from([0xc3, 0x28, 0xff]);
/** Size of the sparse file (data at its start and in its middle, holes elsewhere). */
export const SPARSE_BYTES = 16 * 1024 * 1024;

/** Plants the tree into the (empty) directory `root`. */
export async function plantPortableTree(root: string): Promise<void> {
  const files: [Buffer | string, string | Buffer, number?][] = [
    ['plain.txt', 'plain'],
    ['empty.txt', ''],
    ['exec.sh', '#!/bin/sh\necho hi\n', 0o755],
    ['private.key', 'k', 0o600],
    ['readonly.txt', 'ro', 0o444],
    ['mode000.txt', 'locked', 0o000],
    ['a/b/c/d/e/deep.txt', 'deep'],
    [`long-${'x'.repeat(60)}/${'y'.repeat(60)}/file-with-a-long-path.txt`, 'long path'],
    [Buffer.concat([BAD_UTF8, Buffer.from('-dir/inner')]), 'inside a non-UTF-8 directory'],
    [Buffer.concat([BAD_UTF8, Buffer.from('-dir/'), BAD_UTF8, Buffer.from('z'.repeat(100))]), 'a long path that is not UTF-8'],
    ['dir750/inside.txt', 'in 750'],
    ['locked-dir/inside.txt', 'in 000'],
    ['hard-a', 'one inode, two names'],
    ['binary.bin', Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 7) % 256))],
  ];
  for (const name of HOSTILE_NAMES) files.push([name, `named ${name.toString('hex')}`]);
  for (const [rel, content, mode] of files) {
    const full = at(root, rel);
    await mkdir(full.subarray(0, full.lastIndexOf(0x2f)), { recursive: true });
    await writeFile(full, content);
    if (mode !== undefined) await chmod(full, mode);
  }
  await mkdir(path.join(root, 'empty-dir'));
  await link(path.join(root, 'hard-a'), path.join(root, 'a', 'hard-b'));
  await symlink('/etc/passwd', path.join(root, 'link-abs'));
  await symlink('../../outside', path.join(root, 'link-rel'));
  await symlink('missing', path.join(root, 'link-dangling'));
  await symlink(BAD_UTF8, at(root, 'link-bad-utf8'));
  await symlink('t'.repeat(150), path.join(root, 'link-long'));
  await symlink('a/b', path.join(root, 'link-to-dir'));
  execFileSync('mkfifo', ['-m', '0640', path.join(root, 'fifo')]);
  execFileSync('mkfifo', ['-m', '0600', path.join(root, 'a', 'new\nline fifo')]);
  const sparse = await open(path.join(root, 'sparse.bin'), 'w');
  try {
    await sparse.write(Buffer.from('head'), 0, 4, 0);
    await sparse.write(Buffer.from('middle'), 0, 6, SPARSE_BYTES / 2);
    await sparse.truncate(SPARSE_BYTES);
  } finally {
    await sparse.close();
  }
  // Older than the racily-clean window, as files an agent wrote a while ago are; one before 1970.
  execFileSync('find', [root, '-type', 'f', '-exec', 'touch', '-h', '-d', '@1700000000.123456789', '{}', '+']);
  await utimes(path.join(root, 'plain.txt'), '-86400.5', '-86400.5');
  await chmod(path.join(root, 'dir750'), 0o750);
  await chmod(path.join(root, 'locked-dir'), 0o000);
  await chmod(path.join(root, 'a', 'b'), 0o555);
}

/** One entry of a described tree. */
export interface EntryFacts {
  readonly type: string;
  readonly mode: number;
  readonly size?: number;
  readonly sha256?: string;
  readonly target?: string;
  readonly mtimeNs?: bigint;
  /** The first path (in walk order) of the entry's inode, for names of a multiply-linked inode. */
  readonly linkGroup?: string;
  /** True when the file has holes. */
  readonly sparse?: boolean;
}

/** Every entry below `root` by its encoded path (`b64:` for bytes that are not UTF-8). */
export async function describeTree(root: string): Promise<Map<string, EntryFacts>> {
  const out = new Map<string, EntryFacts>();
  const groups = new Map<number, string>();
  for await (const entry of walkTree(root)) {
    const p = encodePath(entry.rel);
    if (entry.type === 'file') {
      const handle = await entry.open();
      let bytes: Buffer;
      let blocks: bigint;
      try {
        bytes = await handle.readFile();
        blocks = (await handle.stat({ bigint: true })).blocks;
      } finally {
        await handle.close();
      }
      const group = entry.nlink > 1 ? (groups.get(entry.ino) ?? (groups.set(entry.ino, p), p)) : undefined;
      out.set(p, { type: 'file', mode: entry.mode, size: entry.size, sha256: createHash('sha256').update(bytes).digest('hex'), mtimeNs: entry.mtimeNs, sparse: blocks * 512n < BigInt(entry.size), ...(group ? { linkGroup: group } : {}) });
    } else if (entry.type === 'symlink') {
      out.set(p, { type: 'symlink', mode: 0, target: encodePath(entry.target!) });
    } else if (entry.type === 'fifo') {
      out.set(p, { type: 'fifo', mode: entry.mode, mtimeNs: entry.mtimeNs });
    } else {
      out.set(p, { type: entry.type, mode: entry.mode });
    }
  }
  return out;
}

/** The facts an exact copy must share with its source: everything but times and holes. */
export function contentFacts(tree: Map<string, EntryFacts>): Record<string, Omit<EntryFacts, 'mtimeNs' | 'sparse'>> {
  const out: Record<string, Omit<EntryFacts, 'mtimeNs' | 'sparse'>> = {};
  for (const [p, { mtimeNs: _time, sparse: _sparse, ...facts }] of tree) out[p] = facts;
  return out;
}
