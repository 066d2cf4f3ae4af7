// A comparable description of a local directory tree: type, content hash, link target, mode.
import { createHash } from 'node:crypto';
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import path from 'node:path';

export type TreeListing = Record<string, string>;

export async function listTree(root: string, prefix = ''): Promise<TreeListing> {
  const out: TreeListing = {};
  for (const name of (await readdir(path.join(root, prefix))).sort()) {
    const relative = prefix === '' ? name : `${prefix}/${name}`;
    const full = path.join(root, relative);
    const stat = await lstat(full);
    if (stat.isSymbolicLink()) out[relative] = `link -> ${await readlink(full)}`;
    else if (stat.isDirectory()) {
      out[relative] = 'dir';
      Object.assign(out, await listTree(root, relative));
    } else if (stat.isFile()) {
      const hash = createHash('sha256').update(await readFile(full)).digest('hex').slice(0, 16);
      out[relative] = `file ${(stat.mode & 0o777).toString(8)} ${hash}`;
    } else out[relative] = 'special';
  }
  return out;
}
