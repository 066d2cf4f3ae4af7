/** `persist@{hostId}`: live tree → new immutable archive revision, fenced on generation. */
import { z } from 'zod';
import { retryingJob } from './job-options.js';
import { Generation, ShortText, WorkspaceId } from './payload.js';
import { REVISION_ID_PATTERN } from '../archive/archive-paths.js';

/** An archive revision id, e.g. `r20261130T101530123Z-g3-k7f2q9`. */
export const RevisionId = z.string({ error: 'must be a string' }).regex(REVISION_ID_PATTERN, { error: 'must be a revision id like r20261130T101530123Z-g3-k7f2q9' });

export const PERSIST = 'persist';

export const PERSIST_REASONS = ['turn-end', 'checkpoint', 'idle-reap', 'shutdown', 'manual', 'rollback', 'upgrade'] as const;
export type PersistReason = (typeof PERSIST_REASONS)[number];

export const PersistPayload = z
  .object({
    workspaceId: WorkspaceId,
    generation: Generation,
    /** `true` reconciles (mirror exactly, deletions included); `false` is upload-only. */
    delete: z.boolean({ error: 'must be true or false' }).default(false),
    reason: z.enum(PERSIST_REASONS, { error: `must be one of ${PERSIST_REASONS.join(', ')}` }).default('manual'),
    turnId: ShortText.optional(),
    /** Bypass the shrink guard for an intended mass deletion. */
    force: z.boolean({ error: 'must be true or false' }).default(false),
    /**
     * Set by the fleet's client only: the id under which it merged this request into the
     * workspace's intent, in the same transaction as the job add. Other producers must omit it
     * (the worker then merges their request itself).
     */
    requestId: z.uuid({ error: 'must be a UUID (set by the fleet client only; omit it)' }).optional(),
    /** Legacy (jobs enqueued before `requestId` existed): the request's sequence number, already merged. */
    requestSeq: z.number().int().min(1).optional(),
    /** Rollback: make this earlier revision's content the new current revision (and restore the live tree). */
    rollbackTo: RevisionId.optional(),
  })
  .strict();
export type PersistPayload = z.infer<typeof PersistPayload>;
export type PersistInput = z.input<typeof PersistPayload>;

/** Result of a persist job. `revision` is the attached revision after the run. */
export interface PersistResult {
  readonly workspaceId: string;
  /** `null` when the workspace has never had a revision (an empty new workspace). */
  readonly revision: string | null;
  readonly generation: number;
  readonly files: number;
  readonly bytes: number;
  readonly changedFiles: number;
  readonly deletedFiles: number;
  readonly unchanged: boolean;
  readonly durationMs: number;
  /** Highest request sequence number this run covered. */
  readonly coveredSeq: number;
  /** Live entries refused by a tree limit (too deep, path too long, too many, too large, unreadable); they keep their archived state. */
  readonly refusedEntries?: number;
  /** The first refused paths with the limit each crossed, e.g. `a/b/c (depth)`. */
  readonly refusedPaths?: readonly string[];
  /** Device nodes and sockets in the live tree (never archived). */
  readonly skippedEntries?: number;
  /** Format 2: bytes of the objects this run wrote (content the archive did not have yet). */
  readonly storedBytes?: number;
  /** Format 2: objects and tree objects this run wrote. */
  readonly newObjects?: number;
  readonly newTrees?: number;
  /** Format 2: of `newObjects`, those a writer thread placed (a walk storing many small files hands them off); absent when 0. */
  readonly offThreadObjects?: number;
  /** Format 2: directories taken from the previous revision by id without being walked (their subtrees held no change). */
  readonly reusedDirectories?: number;
  /** Format 2: entries of walked directories taken as recorded without an lstat (the change scan vouched they did not change). */
  readonly unstattedEntries?: number;
  /** Format 2: walked directories whose names were taken from the previous revision, not read (the change scan says they did not change themselves). */
  readonly unlistedDirectories?: number;
  /** Format 2: how long the walks waited for files changed too recently to read (a write(2) may have been under way); absent when 0. */
  readonly writeWaitMs?: number;
  /** A checkpoint that walked its live tree more than once (to find a moment the tree held still): how many times. */
  readonly walks?: number;
  /**
   * Checkpoints of a live tree (format 2): true when two walks in a row agreed (the revision is
   * the state the tree had at one instant), false when the tree changed during every walk.
   */
  readonly pointInTime?: boolean;
  /** Remote providers (Vercel), format 2: bytes moved to bring the tree to the host (compressed listing and changed files, the request). */
  readonly transferredBytes?: number;
  /** Remote providers (Vercel), format 2: files whose content was transferred. */
  readonly transferredFiles?: number;
  /** Remote providers (Vercel), format 2: files of a lost host copy written from the current revision instead of transferred. */
  readonly seededFiles?: number;
}

export const persistJobOptions = retryingJob(5, 2_000);

/** `fleet rollback` / `POST .../rollback` input. */
export const RollbackInput = z
  .object({
    workspaceId: WorkspaceId,
    revision: RevisionId,
    /** Expected generation (defaults to the live incarnation's). */
    generation: Generation.optional(),
  })
  .strict();
export type RollbackInput = z.input<typeof RollbackInput>;

/** Result of a rollback: the new revision holding the old content. */
export interface RollbackResult {
  readonly workspaceId: string;
  readonly revision: string;
  readonly restoredFrom: string;
  readonly generation: number;
  readonly files: number;
  readonly durationMs: number;
}

/** Rollbacks never merge with persist requests (they run as their own job on the host queue). */
export const rollbackDedupId = (workspaceId: string) => `rollback:${workspaceId}`;

/**
 * Requests for one workspace coalesce; one arriving while its twin is active is kept and runs
 * once after it (`keepLastIfActive`). Flags are merged in the persist intent (delete wins).
 */
export const persistDeduplication = (workspaceId: string) => ({ id: `persist:${workspaceId}`, keepLastIfActive: true });
