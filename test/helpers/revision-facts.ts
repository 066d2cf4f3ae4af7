// A live tree and a format 2 revision as comparable facts (raw names, exact content digests,
// modes and mtimes in the form the archive stores them), so a test can assert that a revision
// is exactly the tree it was taken from.
import { createHash } from 'node:crypto';
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import type { ArchiveStore } from '../../src/archive/archive-store.js';
import { storedMode } from '../../src/archive/stored-mode.js';
import type { TreeNode } from '../../src/archive/tree-object.js';
import { encodePath } from '../../src/archive/tree-walk.js';
import { storedMtimeNs } from '../../src/tree/file-times.js';

/** Path (encoded like manifest paths) → `f <mode> <sha256> <mtime ns>`, `d <mode>`, `l <target hex>` or `p <mode> <mtime ns>`. */
export type TreeFactMap = Record<string, string>;

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/**
 * The facts of a live directory as the archive would store them: modes without setuid/setgid,
 * directories with owner rwx (the Vercel mirror keeps them enterable), FIFO permission bits,
 * file and FIFO times as Node sets them (`stored`: the times already are, e.g. in a mirror);
 * sockets and devices left out (never archived).
 */
export async function liveFacts(root: string, { stored = false }: { stored?: boolean } = {}): Promise<TreeFactMap> {
  const time = (ns: bigint) => (stored ? ns : storedMtimeNs(ns));
  const out: TreeFactMap = {};
  const walk = async (rel: Buffer): Promise<void> => {
    const dir = rel.length === 0 ? root : Buffer.concat([Buffer.from(`${root}/`), rel]);
    for (const name of (await readdir(dir, { encoding: 'buffer' })).sort(Buffer.compare)) {
      const child = rel.length === 0 ? name : Buffer.concat([rel, Buffer.from('/'), name]);
      const full = Buffer.concat([Buffer.from(`${root}/`), child]);
      const stats = await lstat(full, { bigint: true });
      const mode = storedMode(stats.mode & 0o7777n);
      const key = encodePath(child);
      if (stats.isFile()) out[key] = `f ${mode.toString(8)} ${sha(await readFile(full))} ${time(stats.mtimeNs)}`;
      else if (stats.isSymbolicLink()) out[key] = `l ${(await readlink(full, { encoding: 'buffer' })).toString('hex')}`;
      else if (stats.isFIFO()) out[key] = `p ${(mode & 0o777).toString(8)} ${time(stats.mtimeNs)}`;
      else if (stats.isDirectory()) {
        out[key] = `d ${(mode | 0o700).toString(8)}`;
        await walk(child);
      }
    }
  };
  await walk(Buffer.alloc(0));
  return out;
}

/** The facts of the current revision of a format 2 workspace. */
export async function revisionFacts(archive: ArchiveStore, workspaceId: string): Promise<TreeFactMap> {
  const revision = await archive.current(workspaceId);
  if (!revision) throw new Error(`workspace ${workspaceId} has no revision`);
  const record = await archive.readRecord(workspaceId, revision);
  if (!record) throw new Error(`revision ${revision} of ${workspaceId} is not format 2`);
  const out: TreeFactMap = {};
  const walk = async (tree: string, rel: Buffer): Promise<void> => {
    for (const node of await archive.objects.readTree(tree)) {
      const child = rel.length === 0 ? node.name : Buffer.concat([rel, Buffer.from('/'), node.name]);
      out[encodePath(child)] = describeNode(node);
      if (node.type === 'd') await walk(node.tree, child);
    }
  };
  await walk(record.root, Buffer.alloc(0));
  return out;
}

// One node as a fact line (the same shape `liveFacts` produces).
function describeNode(node: TreeNode): string {
  if (node.type === 'f') return `f ${node.mode.toString(8)} ${node.object} ${node.mtimeNs}`;
  if (node.type === 'd') return `d ${node.mode.toString(8)}`;
  if (node.type === 'l') return `l ${node.target.toString('hex')}`;
  return `p ${node.mode.toString(8)} ${node.mtimeNs}`;
}
