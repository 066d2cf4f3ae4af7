/**
 * A host-local, cross-process lock on one mirror, held from `openTree` until the persist
 * releases the tree: two persists never walk or update one mirror at once. The lock is a
 * directory renamed into place with its owner (`<pid> <boot id>`) already inside, so it is never
 * seen without one; a lock whose owner died or belongs to an earlier boot is moved aside and
 * removed. A live owner (this process included) makes the caller fail busy: persists of one
 * workspace are serialised by the queue, so meeting one means a duplicate that may retry later.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { errnoOf } from '../../errors/classify-storage-error.js';
import { bootId } from '../../lib/boot-id.js';
import { processAlive } from '../../lib/process-alive.js';
import { ProviderBusyError } from '../provider-errors.js';

// Rounds of taking a lock that keeps turning out stale (another process reclaims it meanwhile).
const ATTEMPTS = 4;

const suffix = () => randomBytes(4).toString('hex');

/** Takes the lock at `lock` (a path in a fleet-owned directory); returns its release. */
export async function lockMirror(lock: string): Promise<() => Promise<void>> {
  const boot = await bootId();
  const owner = `${process.pid} ${boot}`;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const fresh = `${lock}.new-${suffix()}`;
    await mkdir(fresh, { mode: 0o700 });
    await writeFile(path.join(fresh, 'owner'), owner, { mode: 0o600 });
    try {
      await rename(fresh, lock);
      return () => unlock(lock, owner);
    } catch (error) {
      await rm(fresh, { recursive: true, force: true });
      if (errnoOf(error) !== 'ENOTEMPTY' && errnoOf(error) !== 'EEXIST') throw error;
    }
    const held = await readFile(path.join(lock, 'owner'), 'utf8').catch(() => null);
    if (held === null) continue;
    const [pid, heldBoot] = held.split(' ');
    if (heldBoot === boot && processAlive(Number(pid))) {
      throw new ProviderBusyError('vercel', 'openTree', `the host mirror is in use by pid ${pid}`, { context: { lock, pid: Number(pid) } });
    }
    await removeLock(lock, held);
  }
  throw new ProviderBusyError('vercel', 'openTree', 'the host mirror lock keeps changing hands', { context: { lock } });
}

// Releases the lock if it is still `owner`'s.
async function unlock(lock: string, owner: string): Promise<void> {
  const held = await readFile(path.join(lock, 'owner'), 'utf8').catch(() => null);
  if (held === owner) await removeLock(lock, owner);
}

// Moves the lock aside and removes it if it still was `owner`'s; a lock another process took
// in the meantime is put back.
async function removeLock(lock: string, owner: string): Promise<void> {
  const aside = `${lock}.old-${suffix()}`;
  try {
    await rename(lock, aside);
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return;
    throw error;
  }
  const moved = await readFile(path.join(aside, 'owner'), 'utf8').catch(() => null);
  if (moved === owner || (await rename(aside, lock).then(() => false, () => true))) await rm(aside, { recursive: true, force: true });
}
