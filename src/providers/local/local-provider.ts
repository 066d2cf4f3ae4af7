/**
 * The `local` provider: one directory per workspace on this host (see live-paths.ts). With
 * namespaced isolation (the default where the start-up probe passes) every command runs under
 * bubblewrap as the workspace's own uid with only its tree in view (src/sandbox/), and the live
 * tree is `0700` and owned by that uid; restores and copies of a base are chowned to it by
 * handles. Without isolation commands run as the fleet's user in the live tree (development).
 * Base snapshots are directories under FLEET_SNAPSHOT_ROOT; first provisioning copies them
 * (`cp --reflink=auto`, never hard links: an in-place write in the sandbox must never reach the
 * base). Restores rsync an archive revision into a fresh staging tree, then swap it in.
 *
 * The live tree is the sandbox's: every host-side operation inside it (a file read or write, a
 * command's cwd, a snapshot, removing an old tree) goes through directory handles beneath its
 * root and never follows a symlink (safe-path.ts, tree/). Trees the fleet built itself (staging
 * trees, snapshots) are copied by path.
 *
 * This class only delegates: each operation is its own file taking the few options it uses.
 */
import { ObjectStore } from '../../archive/object-store.js';
import { noIsolation, type Isolation } from '../../sandbox/isolation.js';
import type { TreeLimits } from '../../tree/tree-limits.js';
import type {
  CreateRequest,
  ExecRequest,
  ExecResult,
  FileToWrite,
  ReadyMarker,
  SandboxInfo,
  SandboxProvider,
  SnapshotStatus,
  TreeSource,
  TakenSnapshot,
} from '../sandbox-provider.js';
import { createSandbox } from './create-sandbox.js';
import { destroySandbox } from './destroy-sandbox.js';
import { execInLiveTree } from './exec-in-live-tree.js';
import { importLiveTree } from './import-live-tree.js';
import type { LocalSandboxing } from './local-sandboxing.js';
import { openLiveTree } from './open-live-tree.js';
import { readLiveFile } from './read-live-file.js';
import { clearReady, markReady, readReady } from './ready-marker.js';
import { getSandbox, listSandboxes } from './sandbox-info.js';
import { setSandboxState } from './sandbox-state.js';
import { deleteSnapshot, snapshotStatus } from './snapshot-dir.js';
import { snapshotLiveTree } from './snapshot-live-tree.js';
import { writeLiveFiles } from './write-live-files.js';

export type { LocalSandboxing } from './local-sandboxing.js';

export interface LocalProviderOptions {
  readonly hostId: string;
  readonly liveRoot: string;
  readonly snapshotRoot: string;
  /** The archive root: `importTree` only reads committed revisions beneath it. */
  readonly archiveRoot: string;
  readonly systemPath: string;
  /** Deadline of one tree copy (restore, snapshot). */
  readonly copyTimeoutMs: number;
  /** What a snapshot takes from a live tree. @default DEFAULT_TREE_LIMITS */
  readonly treeLimits?: TreeLimits;
  /** Counts the exit code of each restore's rsync (metrics). */
  readonly onRsyncExit?: (exitCode: number) => void;
  /** Restore format 2 revisions through the host's tar (`FLEET_RESTORE_TAR`). @default true */
  readonly restoreViaTar?: boolean;
  /** Told when a restore through tar failed and the revision was materialised instead. */
  readonly onRestoreTarFailure?: (failure: string) => void;
  /** Containment of commands. @default none: commands run as the fleet's user (host-side tests) */
  readonly sandbox?: LocalSandboxing;
}

// What the operations draw their dependencies from: the options, the isolation as this class
// reports it, and the archive's object store (made on first use).
type LocalDeps = LocalProviderOptions & { readonly sandboxing: LocalSandboxing; readonly objects: () => ObjectStore };

export class LocalProvider implements SandboxProvider {
  readonly name = 'local' as const;
  readonly handleKind = 'volume-path' as const;
  readonly #deps: LocalDeps;

  constructor(private readonly options: LocalProviderOptions) {
    // uidFor is only asked for under isolation, which a provider without `sandbox` never reports.
    const sandboxing: LocalSandboxing = { isolation: () => this.isolation(), uidFor: (workspaceId) => this.options.sandbox!.uidFor(workspaceId) };
    let store: ObjectStore | undefined;
    this.#deps = { ...options, sandboxing, objects: () => (store ??= new ObjectStore(options.archiveRoot)) };
  }

  /** The isolation commands run under. */
  isolation(): Promise<Isolation> {
    return this.options.sandbox?.isolation() ?? Promise.resolve(noIsolation('no sandboxing configured for this provider'));
  }

  create(request: CreateRequest): Promise<{ handle: string; hostId: string }> {
    return createSandbox(this.#deps, request);
  }

  get(handle: string): Promise<SandboxInfo | null> {
    return getSandbox(this.#deps, handle);
  }

  async resume(handle: string, signal: AbortSignal): Promise<void> {
    await setSandboxState(this.#deps, handle, 'running', 'resume', signal);
  }

  list(): Promise<SandboxInfo[]> {
    return listSandboxes(this.#deps);
  }

  exec(handle: string, request: ExecRequest): Promise<ExecResult> {
    return execInLiveTree(this.#deps, handle, request);
  }

  writeFiles(handle: string, files: readonly FileToWrite[]): Promise<void> {
    return writeLiveFiles(this.#deps, handle, files);
  }

  readFile(handle: string, relative: string): Promise<Buffer | null> {
    return readLiveFile(this.#deps, handle, relative);
  }

  openTree(handle: string): Promise<TreeSource> {
    return openLiveTree(this.#deps, handle);
  }

  importTree(handle: string, from: string, signal: AbortSignal): Promise<void> {
    return importLiveTree(this.#deps, handle, from, signal);
  }

  markReady(handle: string, marker: ReadyMarker, signal: AbortSignal): Promise<void> {
    return markReady(this.#deps, handle, marker, signal);
  }

  readReady(handle: string): Promise<ReadyMarker | null> {
    return readReady(this.#deps, handle);
  }

  clearReady(handle: string, signal: AbortSignal): Promise<void> {
    return clearReady(this.#deps, handle, signal);
  }

  snapshot(handle: string, { signal }: { expirationMs: number; signal: AbortSignal }): Promise<TakenSnapshot> {
    return snapshotLiveTree(this.#deps, handle, signal);
  }

  snapshotStatus(snapshotId: string): Promise<SnapshotStatus> {
    return snapshotStatus(this.options.snapshotRoot, snapshotId);
  }

  deleteSnapshot(snapshotId: string): Promise<void> {
    return deleteSnapshot(this.options.snapshotRoot, snapshotId);
  }

  async stop(handle: string, signal: AbortSignal): Promise<void> {
    await setSandboxState(this.#deps, handle, 'stopped', 'stop', signal);
  }

  destroy(handle: string, signal: AbortSignal): Promise<void> {
    return destroySandbox(this.#deps, handle, signal);
  }
}
