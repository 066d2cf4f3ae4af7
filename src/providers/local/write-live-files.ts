/**
 * `writeFiles`: files the host writes into the live tree for a caller, by handles beneath its
 * root (a symlink in the way is replaced, never followed). Under namespaced isolation they and
 * any directory made for them belong to the sandbox like the rest of its tree.
 */
import { randomBytes } from 'node:crypto';
import { errnoOf } from '../../errors/classify-storage-error.js';
import { PayloadInvalidError } from '../../errors/payload-invalid-error.js';
import { chownDir } from '../../tree/chown-tree.js';
import { CREATE_FILE_FLAGS, type DirHandle } from '../../tree/dir-handle.js';
import type { FileToWrite } from '../sandbox-provider.js';
import { classifyFsError } from './classify-fs-error.js';
import type { LocalHost } from './handle-paths.js';
import type { LocalSandboxing } from './local-sandboxing.js';
import { openLiveRoot } from './open-live-root.js';
import { ownSandbox } from './own-sandbox.js';
import { openParentBeneath } from './safe-path.js';

/** Setuid and setgid are never set on a file written for a caller. */
const WRITABLE_MODE_BITS = 0o1777;

export interface WriteLiveFilesDeps extends LocalHost {
  readonly sandboxing: Pick<LocalSandboxing, 'isolation'>;
}

export async function writeLiveFiles(deps: WriteLiveFilesDeps, handle: string, files: readonly FileToWrite[]): Promise<void> {
  const { paths, meta } = await ownSandbox(deps, handle, 'writeFiles');
  // Files the host writes for a caller belong to the sandbox like the rest of its tree.
  const owner = (await deps.sandboxing.isolation()).mode === 'namespaces' ? meta.uid : undefined;
  const root = await openLiveRoot(paths, 'writeFiles');
  try {
    for (const file of files) {
      const parent = (await openParentBeneath(root, file.path, { create: true, ...(owner === undefined ? {} : { onCreateDir: (dir: DirHandle) => chownDir(dir, owner, owner) }) }))!;
      try {
        await writeBeneath(parent.dir, parent.name, file, owner);
      } finally {
        if (parent.owned) await parent.dir.close();
      }
    }
  } catch (error) {
    throw classifyFsError(error, 'writeFiles');
  } finally {
    await root.close();
  }
}

// Writes `file` as `name` beneath `dir`: a private temporary file, then a rename over the name
// (which replaces a symlink there instead of following it).
async function writeBeneath(dir: DirHandle, name: Buffer, file: FileToWrite, owner: number | undefined): Promise<void> {
  const temp = Buffer.from(`.fleet-tmp-${randomBytes(6).toString('hex')}`);
  const out = await dir.openFile(temp, CREATE_FILE_FLAGS, 0o600);
  try {
    await out.writeFile(file.content);
    if (owner !== undefined) await out.chown(owner, owner);
    await out.chmod((file.mode ?? 0o644) & WRITABLE_MODE_BITS);
  } finally {
    await out.close();
  }
  try {
    await dir.rename(temp, dir, name);
  } catch (error) {
    await dir.unlink(temp).catch(() => undefined);
    if (errnoOf(error) === 'EISDIR' || errnoOf(error) === 'ENOTEMPTY') {
      throw new PayloadInvalidError('path', [{ field: 'path', message: 'names a directory of the workspace tree', value: name.toString() }]);
    }
    throw error;
  }
}
