/**
 * Entry guards of the local provider (defence in depth behind the hostops schemas): every id
 * and path a method turns into a host path is checked again before anything is touched. A bad
 * one is a permanent `PayloadInvalidError` naming the field and the value, never a raw throw.
 */
import { lstat } from 'node:fs/promises';
import { archivePaths, recordAt, revisionAt } from '../../archive/archive-paths.js';
import { PayloadInvalidError } from '../../errors/payload-invalid-error.js';
import { checkIds } from '../id-rules.js';
import type { CreateRequest } from '../sandbox-provider.js';

/** The workspace id, generation and snapshot id of a create. */
export function checkCreateRequest({ workspaceId, generation, source }: Pick<CreateRequest, 'workspaceId' | 'generation' | 'source'>): void {
  checkIds('local create', { workspaceId });
  if (!Number.isSafeInteger(generation) || generation < 1) {
    throw new PayloadInvalidError('local create', [{ field: 'generation', message: 'must be a whole number >= 1', value: generation }]);
  }
  if (source.type !== 'empty') checkIds('local create', { snapshotId: source.snapshotId ?? null }, 'source.');
}

/** A snapshot id about to become `{snapshotRoot}/{id}`. */
export function checkSnapshotId(operation: string, snapshotId: string): void {
  checkIds(`local ${operation}`, { snapshotId });
}

/**
 * An importTree source: exactly a committed revision directory of the handle's own workspace
 * under this host's archive root (a real directory with its manifest). An absent one is left to
 * the copy, which reports it as before.
 */
export async function checkImportSource(archiveRoot: string, workspaceId: string, from: string): Promise<void> {
  const refuse = (message: string): never => {
    throw new PayloadInvalidError('local importTree', [{ field: 'from', message, value: from }]);
  };
  if (typeof from === 'string' && recordAt(archiveRoot, workspaceId, from) !== null) {
    // Format 2: the revision record of the handle's own workspace, a regular file.
    const stats = await lstat(from).catch(() => null);
    if (stats !== null && !stats.isFile()) refuse('must be a revision record, not a symlink or a directory');
    return;
  }
  const revision = typeof from === 'string' ? revisionAt(archiveRoot, workspaceId, from) : null;
  if (revision === null) refuse(`must be a revision directory or record of workspace ${workspaceId} under ${archiveRoot}`);
  const stats = await lstat(from).catch(() => null);
  if (stats === null) return;
  if (!stats.isDirectory()) refuse('must be a real directory, not a symlink or a file');
  const manifest = await lstat(archivePaths(archiveRoot, workspaceId).manifest(revision!)).catch(() => null);
  if (!manifest?.isFile()) refuse('must be a committed revision (its manifest is missing)');
}
