import { randomBytes } from 'node:crypto';
import { open, rename } from 'node:fs/promises';
import path from 'node:path';
import { fsyncDir } from '../../archive/fsync.js';

/** Atomic, durable small-file write (a meta file the fleet owns, outside every live tree). */
export async function writeDurable(file: string, content: string): Promise<void> {
  const tmp = `${file}.tmp-${randomBytes(4).toString('hex')}`;
  const handle = await open(tmp, 'wx', 0o600);
  try {
    await handle.writeFile(content);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(tmp, file);
  await fsyncDir(path.dirname(file));
}
