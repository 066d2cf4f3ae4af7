/**
 * Space on the filesystem that holds the archive, as this process sees it (statfs of the archive
 * root), for the `FleetArchiveDiskLow` alert: a full archive disk stops every persist. `null` when
 * statfs fails or does not answer within `deadlineMs` (a hung network mount must not hang a scrape).
 */
import { statfs } from 'node:fs/promises';

export interface ArchiveFilesystem {
  readonly availBytes: number;
  readonly sizeBytes: number;
}

export async function archiveFilesystem(root: string, deadlineMs = 2_000): Promise<ArchiveFilesystem | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), deadlineMs);
  });
  try {
    const stats = await Promise.race([statfs(root).catch(() => null), late]);
    return stats === null ? null : { availBytes: stats.bavail * stats.bsize, sizeBytes: stats.blocks * stats.bsize };
  } finally {
    clearTimeout(timer);
  }
}
