/**
 * Space on the filesystem that holds the archive, as this process sees it (statfs of the archive
 * root), for the `FleetArchiveDiskLow` alert: a full archive disk stops every persist. `null` when
 * statfs fails or does not answer within `deadlineMs` (a hung network mount must not hang a scrape).
 */
import { statfs } from 'node:fs/promises';
import { withTimeout } from '../lib/with-timeout.js';

export interface ArchiveFilesystem {
  readonly availBytes: number;
  readonly sizeBytes: number;
}

export async function archiveFilesystem(root: string, deadlineMs = 2_000): Promise<ArchiveFilesystem | null> {
  const stats = await withTimeout(statfs(root), deadlineMs, () => new Error(`statfs ${root} timed out`)).catch(() => null);
  return stats === null ? null : { availBytes: stats.bavail * stats.bsize, sizeBytes: stats.blocks * stats.bsize };
}
