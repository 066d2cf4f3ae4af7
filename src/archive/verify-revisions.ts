/**
 * Integrity check of committed revisions (like `restic check --read-data`): every file is
 * re-hashed and compared with the manifest written at commit time. `sample` checks a random
 * subset of revisions (like `--read-data-subset`).
 */
import type { ArchiveStore } from './archive-store.js';
import { verifyTree, type Mismatch } from './manifest.js';

export interface RevisionCheck {
  readonly workspaceId: string;
  readonly revision: string;
  readonly ok: boolean;
  readonly files: number;
  readonly mismatches: readonly Mismatch[];
  /** The manifest's own treeHash disagrees with its entries (manifest tampered or torn). */
  readonly manifestCorrupt: boolean;
}

export interface VerifyOptions {
  /** Fraction (0..1] of revisions to check; 1 = all. */
  readonly sample?: number;
  readonly signal?: AbortSignal;
  readonly onRevision?: (check: RevisionCheck, done: number, total: number) => void;
  readonly random?: () => number;
}

export async function verifyRevisions(archive: ArchiveStore, workspaceIds: readonly string[], options: VerifyOptions = {}): Promise<RevisionCheck[]> {
  const sample = options.sample ?? 1;
  const random = options.random ?? Math.random;
  const targets: { workspaceId: string; revision: string }[] = [];
  for (const workspaceId of workspaceIds) {
    for (const revision of await archive.revisions(workspaceId)) {
      if (sample >= 1 || random() < sample) targets.push({ workspaceId, revision });
    }
  }
  const checks: RevisionCheck[] = [];
  for (const { workspaceId, revision } of targets) {
    const manifest = await archive.readManifest(workspaceId, revision);
    let check: RevisionCheck;
    if (!manifest) {
      check = { workspaceId, revision, ok: false, files: 0, mismatches: [{ path: '(manifest)', problem: 'missing' }], manifestCorrupt: true };
    } else {
      const { mismatches, treeHash } = await verifyTree(archive.paths(workspaceId).revision(revision), manifest, options.signal);
      const manifestCorrupt = mismatches.length === 0 && treeHash !== manifest.treeHash;
      check = { workspaceId, revision, ok: mismatches.length === 0 && !manifestCorrupt, files: manifest.files, mismatches, manifestCorrupt };
    }
    checks.push(check);
    options.onRevision?.(check, checks.length, targets.length);
  }
  return checks;
}
