/**
 * The fleet's own directories (FLEET_HOME, the live, archive, snapshot, legacy and Vercel mirror roots) are
 * `0700` and owned by the fleet's user, so a sandbox uid can neither list nor enter them: it
 * reaches its own tree only through the bind mount made from the fleet's descriptor. Every
 * place that creates one does so with mode 0700; at start-up, when sandboxes are isolated, the
 * ones that already exist are tightened (a home made by an older fleet), and one the fleet cannot
 * fix (not its own, a read-only or foreign NFS mount) is reported, not silently accepted.
 */
import { chmod, lstat } from 'node:fs/promises';
import type { Config } from '../config.js';

export interface DirFinding {
  readonly path: string;
  readonly problem: string;
}

/** Tightens each existing fleet directory to 0700; returns what could not be made private. */
export async function secureFleetDirs(paths: Config['paths']): Promise<DirFinding[]> {
  const findings: DirFinding[] = [];
  const uid = typeof process.getuid === 'function' ? process.getuid() : -1;
  for (const dir of [...new Set([paths.home, paths.liveRoot, paths.archiveRoot, paths.snapshotRoot, paths.legacyRoot, paths.vercelMirrorRoot])]) {
    try {
      const stats = await lstat(dir).catch((error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? null : Promise.reject(error)));
      if (stats === null) continue;
      if (!stats.isDirectory()) {
        findings.push({ path: dir, problem: 'is not a directory' });
      } else if (stats.uid !== uid) {
        findings.push({ path: dir, problem: `is owned by uid ${stats.uid}, not the fleet's ${uid}` });
      } else if ((stats.mode & 0o077) !== 0) {
        await chmod(dir, 0o700);
      }
    } catch (error) {
      findings.push({ path: dir, problem: `cannot be made 0700: ${(error as Error).message}` });
    }
  }
  return findings;
}
