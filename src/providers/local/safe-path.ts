/**
 * Paths inside a sandbox tree, for the few operations the host runs on a caller's behalf (read
 * or write one file, the cwd of a command). A path must be relative, without `..`, `.` or empty
 * segments, and is then walked one component at a time beneath directory handles with
 * `O_NOFOLLOW`: a symlink or a file on the way is refused, and a component swapped for a symlink
 * while the walk runs makes the open fail instead of leading outside the tree. No joined path
 * string is ever resolved again.
 */
import { PayloadInvalidError } from '../../errors/payload-invalid-error.js';
import { errnoOf } from '../../errors/classify-storage-error.js';
import { DirHandle } from '../../tree/dir-handle.js';

/** Longest file name (bytes) Linux filesystems accept (NAME_MAX). */
const NAME_MAX_BYTES = 255;
/** Longest relative path (bytes) accepted, so that it fits PATH_MAX (4096 with the NUL). */
const PATH_MAX_BYTES = 4_095;

/** Validates a relative path's shape (pure); returns its segments. */
export function checkRelativePath(field: string, relative: string): string[] {
  const parts = relative.split('/');
  if (relative === '' || relative.startsWith('/') || relative.includes('\0') || parts.some((p) => p === '' || p === '.' || p === '..')) {
    throw new PayloadInvalidError('path', [{ field, message: 'must be a relative path without "..", ".", empty segments or NUL', value: relative }]);
  }
  if (Buffer.byteLength(relative) > PATH_MAX_BYTES || parts.some((p) => Buffer.byteLength(p) > NAME_MAX_BYTES)) {
    throw new PayloadInvalidError('path', [{ field, message: `must be at most ${PATH_MAX_BYTES} bytes with names of at most ${NAME_MAX_BYTES} bytes`, value: relative }]);
  }
  return parts;
}

export interface BeneathOptions {
  /** Field name for errors. @default "path" */
  readonly field?: string;
  /** Create missing directories (mode 0755) instead of answering null. */
  readonly create?: boolean;
  /** Called with each directory `create` made, opened (e.g. to chown it to the sandbox's uid). */
  readonly onCreateDir?: (dir: DirHandle) => Promise<void>;
}

// The refusal for a component that is a symlink or not a directory.
async function refusal(dir: DirHandle, name: Buffer, field: string, relative: string): Promise<PayloadInvalidError> {
  const stats = await dir.lstat(name).catch(() => null);
  const message = stats?.isSymbolicLink() ? 'passes through a symlink; refusing to follow it' : 'passes through a file';
  return new PayloadInvalidError('path', [{ field, message, value: relative }]);
}

/**
 * Opens the directory named by `parts` beneath `root` (the caller closes it). Null when a
 * component is missing (and `create` is off).
 */
async function openParts(root: DirHandle, parts: readonly string[], relative: string, options: BeneathOptions): Promise<DirHandle | null> {
  const field = options.field ?? 'path';
  let current = root;
  try {
    for (const part of parts) {
      const name = Buffer.from(part);
      let next: DirHandle;
      try {
        next = await current.openDir(name);
      } catch (error) {
        const code = errnoOf(error);
        if (code === 'ENOENT' && options.create) {
          const made = await current.mkdir(name, 0o755).then(
            () => true,
            (e: unknown) => (errnoOf(e) === 'EEXIST' ? false : Promise.reject(e)),
          );
          next = await current.openDir(name).catch(async (e: unknown) => Promise.reject(errnoOf(e) === 'ENOTDIR' || errnoOf(e) === 'ELOOP' ? await refusal(current, name, field, relative) : e));
          if (made) await options.onCreateDir?.(next).catch(async (e: unknown) => Promise.reject((await next.close(), e)));
        } else if (code === 'ENOENT') {
          return null;
        } else if (code === 'ENOTDIR' || code === 'ELOOP') {
          throw await refusal(current, name, field, relative);
        } else {
          throw error;
        }
      }
      if (current !== root) await current.close();
      current = next;
    }
    return current;
  } catch (error) {
    if (current !== root) await current.close();
    throw error;
  }
}

/** Opens the directory `relative` beneath `root`; null when it does not exist. */
export async function openDirBeneath(root: DirHandle, relative: string, options: BeneathOptions = {}): Promise<DirHandle | null> {
  const parts = checkRelativePath(options.field ?? 'path', relative);
  return openParts(root, parts, relative, options);
}

/**
 * Opens the parent directory of `relative` beneath `root` and returns it with the last name
 * (the caller closes `dir`, which may be `root` itself for a top-level name: check `owned`).
 * Null when a parent is missing (and `create` is off); a symlink as the last name is refused.
 */
export async function openParentBeneath(root: DirHandle, relative: string, options: BeneathOptions = {}): Promise<{ dir: DirHandle; name: Buffer; owned: boolean } | null> {
  const parts = checkRelativePath(options.field ?? 'path', relative);
  const dir = await openParts(root, parts.slice(0, -1), relative, options);
  if (!dir) return null;
  const name = Buffer.from(parts.at(-1)!);
  // A symlink as the last component is refused too (what follows never follows it anyway:
  // reads open with O_NOFOLLOW, writes rename over the name).
  if ((await dir.lstat(name).catch(() => null))?.isSymbolicLink()) {
    if (dir !== root) await dir.close();
    throw new PayloadInvalidError('path', [{ field: options.field ?? 'path', message: 'is a symlink; refusing to follow it', value: relative }]);
  }
  return { dir, name, owned: dir !== root };
}
