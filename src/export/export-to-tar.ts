/**
 * `fleet export --tar FILE`: a revision of either format streamed into a POSIX tar, from its
 * trees and objects (format 2) or a walk of its directory by handles (format 1), with no
 * temporary tree. Written to a private temporary beside FILE, then linked into place (`link(2)`
 * fails on an existing name, so nothing created meanwhile is overwritten).
 */
import { constants } from 'node:fs';
import { link, open, unlink } from 'node:fs/promises';
import type { ArchiveStore } from '../archive/archive-store.js';
import { classifyStorageError } from '../errors/classify-storage-error.js';
import { checkExportTarget, exportTemp } from './export-target.js';
import type { ExportSource } from './export-source.js';
import type { ExportOptions } from './export-to-directory.js';
import { revisionEntries } from './revision-entries.js';
import { writeTar, type ExportCounts } from './write-tar.js';

export async function exportToTar(archive: ArchiveStore, source: ExportSource, file: string, options: ExportOptions): Promise<ExportCounts & { tarBytes: number }> {
  await checkExportTarget(file, 'tar');
  const tmp = exportTemp(file);
  const out = await open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600).catch((error: unknown) => Promise.reject(classifyStorageError(error, 'export create', tmp)));
  try {
    let written;
    try {
      written = await writeTar(revisionEntries(archive.objects, source), out, {
        signal: options.signal,
        label: `${source.workspaceId}/${source.revision}`,
        onEntry: (counts) => options.onProgress?.(counts.entries, source.entries),
      });
      await out.sync();
    } finally {
      await out.close();
    }
    await link(tmp, file).catch((error: unknown) => Promise.reject(classifyStorageError(error, 'export link', file)));
    return written;
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
}
