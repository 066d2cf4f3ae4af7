// Reading trees for assertions: relative path → content (files) / target (symlinks) / 'dir'.
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import path from 'node:path';

export async function readTree(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  async function walk(rel: string): Promise<void> {
    const names = await readdir(path.join(root, rel));
    for (const name of names.sort()) {
      const child = rel ? `${rel}/${name}` : name;
      const stats = await lstat(path.join(root, child));
      if (stats.isSymbolicLink()) out[child] = `-> ${await readlink(path.join(root, child))}`;
      else if (stats.isDirectory()) {
        out[child] = 'dir';
        await walk(child);
      } else if (stats.isFile()) out[child] = (await readFile(path.join(root, child))).toString('base64');
      else out[child] = 'special';
    }
  }
  await walk('');
  return out;
}
