import { unlink } from 'node:fs/promises';
import { errnoOf } from '../../errors/classify-storage-error.js';

/** Removes a file the fleet owns (meta files); a missing one is not an error. */
export async function removeFile(file: string): Promise<void> {
  await unlink(file).catch((error: unknown) => (errnoOf(error) === 'ENOENT' ? undefined : Promise.reject(error)));
}
