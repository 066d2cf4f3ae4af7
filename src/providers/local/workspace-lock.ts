/**
 * A host-local, cross-process lock on one workspace's live directory, held around every change
 * of which incarnation lives there (create, restore swap, marker, stop, destroy). It is a
 * directory created with mkdir (atomic) holding the owner's pid; a lock whose owner process is
 * dead is reclaimed. A paused owner keeps the lock, so a competing provisioner waits (and fails
 * busy at its deadline) instead of interleaving with a stale writer.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ProviderBusyError } from '../provider-errors.js';
import { processAlive } from '../../lib/process-alive.js';

export async function withWorkspaceLock<T>(metaDir: string, signal: AbortSignal, timeoutMs: number, fn: () => Promise<T>): Promise<T> {
  const lock = path.join(metaDir, 'lock');
  const deadline = Date.now() + timeoutMs;
  await mkdir(metaDir, { recursive: true, mode: 0o700 });
  for (;;) {
    try {
      await mkdir(lock);
      await writeFile(path.join(lock, 'owner'), String(process.pid));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number(await readFile(path.join(lock, 'owner'), 'utf8').catch(() => 'NaN'));
      // An owner that died (or never wrote its pid and is gone) leaves a stale lock: reclaim it.
      if (Number.isFinite(owner) && !processAlive(owner)) {
        await rm(lock, { recursive: true, force: true });
        continue;
      }
      if (!Number.isFinite(owner) && Date.now() > deadline - timeoutMs / 2) {
        await rm(lock, { recursive: true, force: true });
        continue;
      }
      if (signal.aborted) throw signal.reason;
      if (Date.now() > deadline) throw new ProviderBusyError('local', 'lock', `live directory ${path.dirname(metaDir)} is locked by pid ${owner}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  try {
    return await fn();
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}
