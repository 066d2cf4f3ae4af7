import { chownTree } from '../../tree/chown-tree.js';
import { DirHandle } from '../../tree/dir-handle.js';

/** Gives a fleet-built staging tree to the workspace's uid (0700 root), by handles; undefined: no isolation, left as is. */
export async function giveTreeTo(staging: string, uid: number | undefined): Promise<void> {
  if (uid === undefined) return;
  const dir = await DirHandle.open(staging);
  try {
    await chownTree(dir, uid, uid);
    await dir.chmod(0o700);
  } finally {
    await dir.close();
  }
}
