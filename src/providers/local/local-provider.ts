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
 */
import { randomBytes } from 'node:crypto';
import { lstat, mkdir, open, readFile, readdir, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import { fsyncDir } from '../../archive/fsync.js';
import { runCommand } from '../../lib/run-command.js';
import { RsyncError } from '../../rsync/rsync-error.js';
import { runRsync } from '../../rsync/run-rsync.js';
import { snapshotArgs } from '../../rsync/rsync-args.js';
import { ProviderBusyError, ProviderGoneError, ProviderPermanentError } from '../provider-errors.js';
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
} from '../sandbox-provider.js';
import { classifyFsError } from './classify-fs-error.js';
import { checkCreateRequest, checkImportSource, checkSnapshotId } from './local-ids.js';
import { livePaths, localHandle, parseLocalHandle, type LivePaths } from './live-paths.js';
import { openDirBeneath, openParentBeneath } from './safe-path.js';
import { RECORD_SUFFIX } from '../../archive/archive-paths.js';
import { buildRevisionTree } from '../../archive/build-revision-tree.js';
import { materializeRevision } from '../../archive/materialize-revision.js';
import { ObjectStore } from '../../archive/object-store.js';
import { parseRevisionRecord } from '../../archive/revision-record.js';
import { errnoOf } from '../../errors/classify-storage-error.js';
import { PayloadInvalidError } from '../../errors/payload-invalid-error.js';
import { CREATE_FILE_FLAGS, DirHandle, READ_FILE_FLAGS } from '../../tree/dir-handle.js';
import { removeTree } from '../../tree/remove-tree.js';
import { DEFAULT_TREE_LIMITS, type TreeLimits } from '../../tree/tree-limits.js';
import { withWorkspaceLock } from './workspace-lock.js';
import { chownDir, chownTree } from '../../tree/chown-tree.js';
import { noIsolation, type Isolation } from '../../sandbox/isolation.js';
import { runSandboxed } from './run-sandboxed.js';

/** How the provider contains commands, and the uid of each workspace. */
export interface LocalSandboxing {
  /** The isolation of this process (decided once, at start-up; see prepare-isolation.ts). */
  isolation(): Promise<Isolation>;
  /** The workspace's uid (allocated once, fleet-wide; see sandbox-uid-store.ts). */
  uidFor(workspaceId: string): Promise<number>;
}

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
  /** Containment of commands. @default none: commands run as the fleet's user (host-side tests) */
  readonly sandbox?: LocalSandboxing;
}

/** Setuid and setgid are never set on a file written for a caller. */
const WRITABLE_MODE_BITS = 0o1777;

interface SandboxMeta {
  readonly handle: string;
  readonly workspaceId: string;
  readonly generation: number;
  readonly hostId: string;
  state: 'running' | 'stopped';
  readonly createdAt: number;
  /** The sandbox uid owning the live tree; absent for a tree made without isolation. */
  uid?: number;
}

// Atomic, durable small-file write.
async function writeDurable(file: string, content: string): Promise<void> {
  const tmp = `${file}.tmp-${randomBytes(4).toString('hex')}`;
  const handle = await open(tmp, 'wx', 0o600);
  try {
    await handle.writeFile(content);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(tmp, file);
  await fsyncDir(path.dirname(file));
}

export class LocalProvider implements SandboxProvider {
  readonly name = 'local' as const;

  constructor(private readonly options: LocalProviderOptions) {}

  /** The isolation commands run under. */
  isolation(): Promise<Isolation> {
    return this.options.sandbox?.isolation() ?? Promise.resolve(noIsolation('no sandboxing configured for this provider'));
  }

  // The uid a workspace's tree must belong to under the current isolation (undefined: none).
  async #uidFor(workspaceId: string): Promise<number | undefined> {
    if ((await this.isolation()).mode === 'none') return undefined;
    return this.options.sandbox!.uidFor(workspaceId);
  }

  // Gives a fleet-built staging tree to the workspace's uid (0700 root), by handles.
  async #giveTo(staging: string, uid: number | undefined): Promise<void> {
    if (uid === undefined) return;
    const dir = await DirHandle.open(staging);
    try {
      await chownTree(dir, uid, uid);
      await dir.chmod(0o700);
    } finally {
      await dir.close();
    }
  }

  // Paths of a handle that must live on this host.
  #paths(handle: string, operation: string): { paths: LivePaths; workspaceId: string; generation: number } {
    const parsed = parseLocalHandle(handle);
    if (!parsed) throw new ProviderPermanentError('local', operation, `not a local handle: ${JSON.stringify(handle)}`);
    if (parsed.hostId !== this.options.hostId) {
      throw new ProviderGoneError('local', operation, `handle ${handle} lives on host ${parsed.hostId}, not on ${this.options.hostId}`);
    }
    return { paths: livePaths(this.options.liveRoot, parsed.workspaceId), workspaceId: parsed.workspaceId, generation: parsed.generation };
  }

  async #readMeta(paths: LivePaths): Promise<SandboxMeta | null> {
    try {
      return JSON.parse(await readFile(paths.sandbox, 'utf8')) as SandboxMeta;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  // The meta of `handle` when it is the incarnation living here; throws gone otherwise.
  async #own(handle: string, operation: string): Promise<{ paths: LivePaths; meta: SandboxMeta }> {
    const { paths } = this.#paths(handle, operation);
    const meta = await this.#readMeta(paths).catch((e: unknown) => {
      throw classifyFsError(e, operation);
    });
    if (!meta || meta.handle !== handle) throw new ProviderGoneError('local', operation, `sandbox ${handle} does not exist on this host`);
    return { paths, meta };
  }

  async create({ workspaceId, generation, source, signal }: CreateRequest): Promise<{ handle: string; hostId: string }> {
    checkCreateRequest({ workspaceId, generation, source });
    const handle = localHandle(this.options.hostId, workspaceId, generation);
    const paths = livePaths(this.options.liveRoot, workspaceId);
    const uid = await this.#uidFor(workspaceId);
    try {
      await mkdir(paths.meta, { recursive: true, mode: 0o700 });
      return await this.#locked(paths, signal, async () => {
      const existing = await this.#readMeta(paths);
      if (existing && existing.generation > generation) {
        throw new ProviderGoneError('local', 'create', `generation ${generation} is superseded by ${existing.handle} on this host`);
      }
      await rmFile(paths.ready);
      const staging = paths.staging(`g${generation}-${randomBytes(3).toString('hex')}`);
      if (source.type === 'empty') {
        await mkdir(staging, { mode: 0o700 });
      } else {
        const tree = path.join(this.options.snapshotRoot, source.snapshotId, 'tree');
        await lstat(tree).catch(() => {
          throw new ProviderPermanentError('local', 'create', `snapshot ${source.snapshotId} not found under ${this.options.snapshotRoot}`);
        });
        const copy = await runCommand('cp', ['-a', '--reflink=auto', '--', tree, staging], { env: { PATH: this.options.systemPath }, timeoutMs: this.options.copyTimeoutMs, signal });
        if (copy.timedOut || copy.aborted) throw new ProviderBusyError('local', 'create', `copying snapshot ${source.snapshotId} exceeded its deadline`);
        if (copy.exitCode !== 0) throw new ProviderPermanentError('local', 'create', `cp of snapshot ${source.snapshotId} failed: ${copy.stderr.trim()}`);
      }
      await this.#giveTo(staging, uid);
      await this.#swapIn(paths, staging);
      const meta: SandboxMeta = { handle, workspaceId, generation, hostId: this.options.hostId, state: 'running', createdAt: Date.now(), ...(uid === undefined ? {} : { uid }) };
      await writeDurable(paths.sandbox, JSON.stringify(meta));
      return { handle, hostId: this.options.hostId };
      });
    } catch (error) {
      throw classifyFsError(error, 'create');
    }
  }

  // Runs a change of the live directory under the host-local workspace lock.
  #locked<T>(paths: LivePaths, signal: AbortSignal, fn: () => Promise<T>): Promise<T> {
    return withWorkspaceLock(paths.meta, signal, this.options.copyTimeoutMs, fn);
  }

  // Replaces the live root by a finished staging tree (old tree removed after the rename).
  async #swapIn(paths: LivePaths, staging: string): Promise<void> {
    const old = paths.staging(`old-${randomBytes(3).toString('hex')}`);
    let moved = false;
    try {
      await rename(paths.root, old);
      moved = true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    await rename(staging, paths.root);
    await fsyncDir(paths.dir);
    // The old tree is the sandbox's (a process may still be changing it): removed by handles.
    if (moved) await removeTree(old);
  }

  // Opens the live tree's root (a real directory, never a symlink).
  async #openRoot(paths: LivePaths, operation: string): Promise<DirHandle> {
    try {
      return await DirHandle.open(paths.root);
    } catch (error) {
      throw classifyFsError(error, operation);
    }
  }

  async get(handle: string): Promise<SandboxInfo | null> {
    const { paths } = this.#paths(handle, 'get');
    try {
      const meta = await this.#readMeta(paths);
      if (!meta || meta.handle !== handle) return null;
      const root = await lstat(paths.root).catch(() => null);
      if (!root?.isDirectory()) return null;
      return { handle, workspaceId: meta.workspaceId, generation: meta.generation, hostId: meta.hostId, state: meta.state, createdAt: meta.createdAt };
    } catch (error) {
      throw classifyFsError(error, 'get');
    }
  }

  async resume(handle: string, signal: AbortSignal): Promise<void> {
    await this.#setState(handle, 'running', 'resume', signal);
  }

  async list(): Promise<SandboxInfo[]> {
    let names: string[];
    try {
      names = await readdir(this.options.liveRoot);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw classifyFsError(error, 'list');
    }
    const out: SandboxInfo[] = [];
    for (const name of names) {
      const meta = await this.#readMeta(livePaths(this.options.liveRoot, name)).catch(() => null);
      if (meta && meta.hostId === this.options.hostId) {
        out.push({ handle: meta.handle, workspaceId: meta.workspaceId, generation: meta.generation, hostId: meta.hostId, state: meta.state, createdAt: meta.createdAt });
      }
    }
    return out;
  }

  async exec(handle: string, request: ExecRequest): Promise<ExecResult> {
    const { paths, meta } = await this.#own(handle, 'exec');
    const [file, ...args] = request.cmd;
    if (!file) throw new ProviderPermanentError('local', 'exec', 'empty command');
    const isolation = await this.isolation();
    const uid = isolation.mode === 'namespaces' ? (meta.uid ?? (await this.#adopt(handle, paths, request.signal))) : undefined;
    const root = await this.#openRoot(paths, 'exec');
    let cwdDir: DirHandle | null = null;
    try {
      if (request.cwd) {
        cwdDir = await openDirBeneath(root, request.cwd, { field: 'cwd' });
        if (!cwdDir) throw new PayloadInvalidError('path', [{ field: 'cwd', message: 'is not a directory of the workspace tree', value: request.cwd }]);
      }
      if (uid !== undefined) return await runSandboxed({ isolation, uid, root, request, systemPath: this.options.systemPath });
      return await this.#run(file, args, (cwdDir ?? root).entry().toString(), request);
    } finally {
      await cwdDir?.close();
      await root.close();
    }
  }

  // Gives a live tree made without isolation to its workspace's uid (a fleet that turned isolation on).
  async #adopt(handle: string, paths: LivePaths, signal: AbortSignal): Promise<number> {
    return this.#locked(paths, signal, async () => {
      const { meta } = await this.#own(handle, 'exec');
      if (meta.uid !== undefined) return meta.uid;
      const uid = await this.options.sandbox!.uidFor(meta.workspaceId);
      const root = await this.#openRoot(paths, 'exec');
      try {
        await chownTree(root, uid, uid);
        await root.chmod(0o700);
      } finally {
        await root.close();
      }
      await writeDurable(paths.sandbox, JSON.stringify({ ...meta, uid }));
      return uid;
    });
  }


  // Runs a command with `cwd` (a handle's kernel path: the child changes into that very directory).
  async #run(file: string, args: readonly string[], cwd: string, request: ExecRequest): Promise<ExecResult> {
    const result = await runCommand(file, args, {
      cwd,
      env: { ...(request.env ?? {}) },
      timeoutMs: request.timeoutMs,
      signal: request.signal,
      ...(request.onStdout ? { onStdout: request.onStdout } : {}),
      ...(request.onStderr ? { onStderr: request.onStderr } : {}),
    }).catch((error: unknown) => {
      // A missing executable is the command's problem, reported like a shell would (127).
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw classifyFsError(error, 'exec');
    });
    if (!result) return { exitCode: 127, signal: null, stdout: '', stderr: `${file}: command not found\n`, timedOut: false, durationMs: 0 };
    return {
      exitCode: result.exitCode,
      signal: result.signal,
      stdout: result.stdout,
      stderr: result.stderr,
      timedOut: result.timedOut,
      durationMs: result.durationMs,
    };
  }

  async writeFiles(handle: string, files: readonly FileToWrite[]): Promise<void> {
    const { paths, meta } = await this.#own(handle, 'writeFiles');
    // Files the host writes for a caller belong to the sandbox like the rest of its tree.
    const owner = (await this.isolation()).mode === 'namespaces' ? meta.uid : undefined;
    const root = await this.#openRoot(paths, 'writeFiles');
    try {
      for (const file of files) {
        const parent = (await openParentBeneath(root, file.path, { create: true, ...(owner === undefined ? {} : { onCreateDir: (dir: DirHandle) => chownDir(dir, owner, owner) }) }))!;
        try {
          await writeBeneath(parent.dir, parent.name, file, owner);
        } finally {
          if (parent.owned) await parent.dir.close();
        }
      }
    } catch (error) {
      throw classifyFsError(error, 'writeFiles');
    } finally {
      await root.close();
    }
  }

  async readFile(handle: string, relative: string): Promise<Buffer | null> {
    const { paths } = await this.#own(handle, 'readFile');
    const root = await this.#openRoot(paths, 'readFile');
    try {
      const parent = await openParentBeneath(root, relative);
      if (!parent) return null;
      try {
        return await readBeneath(parent.dir, parent.name);
      } finally {
        if (parent.owned) await parent.dir.close();
      }
    } catch (error) {
      throw classifyFsError(error, 'readFile');
    } finally {
      await root.close();
    }
  }

  async openTree(handle: string): Promise<TreeSource> {
    const { paths } = await this.#own(handle, 'openTree');
    const stats = await lstat(paths.root).catch((e: unknown) => {
      throw classifyFsError(e, 'openTree');
    });
    // The root itself must be a real directory: a symlinked root would make rsync read elsewhere.
    if (!stats.isDirectory()) throw new ProviderPermanentError('local', 'openTree', `${paths.root} is not a real directory`);
    return { path: paths.root, statCache: path.join(paths.meta, 'stat-cache.json'), release: async () => undefined };
  }

  async importTree(handle: string, from: string, signal: AbortSignal): Promise<void> {
    const { paths, workspaceId } = this.#paths(handle, 'importTree');
    await checkImportSource(this.options.archiveRoot, workspaceId, from);
    await this.#locked(paths, signal, async () => {
      const { meta } = await this.#own(handle, 'importTree');
      const uid = (await this.isolation()).mode === 'namespaces' ? (meta.uid ?? (await this.options.sandbox!.uidFor(workspaceId))) : undefined;
      await rmFile(paths.ready);
      await fsyncDir(paths.meta);
      const staging = paths.staging(`restore-${randomBytes(3).toString('hex')}`);
      try {
        await mkdir(staging, { mode: 0o700 });
        if (from.endsWith(RECORD_SUFFIX)) {
          // Owned by the workspace's uid as each entry is made (no second walk).
          await this.#materialize(workspaceId, from, staging, uid, signal);
        } else {
          // No --link-dest: the live tree must never share inodes with the archive.
          const run = await runRsync({
            args: snapshotArgs({ source: from, dest: staging, ioTimeoutS: Math.max(30, Math.ceil(this.options.copyTimeoutMs / 1000)) }),
            operation: 'restore',
            timeoutMs: this.options.copyTimeoutMs,
            signal,
            path: this.options.systemPath,
          }).catch((error: unknown) => {
            if (error instanceof RsyncError) this.options.onRsyncExit?.(error.exitCode);
            throw error;
          });
          this.options.onRsyncExit?.(run.exitCode);
        }
        // Archived files are root's; restored ones belong to the workspace's uid.
        if (!from.endsWith(RECORD_SUFFIX)) await this.#giveTo(staging, uid);
        await this.#swapIn(paths, staging);
        if (uid !== undefined && meta.uid !== uid) await writeDurable(paths.sandbox, JSON.stringify({ ...meta, uid }));
      } catch (error) {
        await removeTree(staging).catch(() => undefined);
        throw classifyFsError(error, 'importTree');
      }
    });
  }

  // Restores a format 2 revision (its record at `from`) into the empty staging tree.
  async #materialize(workspaceId: string, from: string, staging: string, uid: number | undefined, signal: AbortSignal): Promise<void> {
    const record = parseRevisionRecord(await readFile(from), from);
    if (record.workspaceId !== workspaceId) throw new ProviderPermanentError('local', 'importTree', `${from} is a revision of ${record.workspaceId}, not of ${workspaceId}`);
    const dest = await DirHandle.open(staging);
    try {
      await materializeRevision(this.#objects(), record.root, dest, {
        systemPath: this.options.systemPath,
        signal: AbortSignal.any([signal, AbortSignal.timeout(this.options.copyTimeoutMs)]),
        ...(uid === undefined ? {} : { owner: { uid, gid: uid } }),
      });
      // The staging root is private until it is swapped in (as #giveTo leaves it).
      if (uid !== undefined) await dest.chmod(0o700);
    } finally {
      await dest.close();
    }
  }

  #store: ObjectStore | undefined;
  #objects(): ObjectStore {
    this.#store ??= new ObjectStore(this.options.archiveRoot);
    return this.#store;
  }

  async markReady(handle: string, marker: ReadyMarker, signal: AbortSignal): Promise<void> {
    const { paths } = this.#paths(handle, 'markReady');
    await this.#locked(paths, signal, async () => {
      const { meta } = await this.#own(handle, 'markReady');
      if (marker.generation !== meta.generation) throw new ProviderPermanentError('local', 'markReady', `marker generation ${marker.generation} does not match ${handle}`);
      await writeDurable(paths.ready, JSON.stringify(marker));
    }).catch((e: unknown) => {
      throw classifyFsError(e, 'markReady');
    });
  }

  async readReady(handle: string): Promise<ReadyMarker | null> {
    const { paths } = await this.#own(handle, 'readReady');
    try {
      return JSON.parse(await readFile(paths.ready, 'utf8')) as ReadyMarker;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      if (error instanceof SyntaxError) return null;
      throw classifyFsError(error, 'readReady');
    }
  }

  async clearReady(handle: string, signal: AbortSignal): Promise<void> {
    const { paths } = this.#paths(handle, 'clearReady');
    await this.#locked(paths, signal, async () => {
      await this.#own(handle, 'clearReady');
      await rmFile(paths.ready);
      await fsyncDir(paths.meta);
    });
  }

  async snapshot(handle: string, { signal }: { expirationMs: number; signal: AbortSignal }): Promise<{ snapshotId: string }> {
    const { paths, meta } = await this.#own(handle, 'snapshot');
    const snapshotId = `snap-${meta.workspaceId}-g${meta.generation}-${randomBytes(4).toString('hex')}`;
    const dir = path.join(this.options.snapshotRoot, snapshotId);
    const deadline = AbortSignal.timeout(this.options.copyTimeoutMs);
    try {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      // The live tree is copied by handles like a persist (never `cp -a`, which re-resolves paths a sandbox can swap).
      const copy = await buildRevisionTree({
        source: paths.root,
        dest: path.join(dir, 'tree'),
        basis: null,
        keepMissing: false,
        limits: this.options.treeLimits ?? DEFAULT_TREE_LIMITS,
        systemPath: this.options.systemPath,
        signal: AbortSignal.any([signal, deadline]),
      }).catch((error: unknown) => Promise.reject(deadline.aborted ? new ProviderBusyError('local', 'snapshot', 'copy exceeded its deadline', { cause: error }) : error));
      if (copy.rootChanged) throw new ProviderBusyError('local', 'snapshot', 'the live tree was replaced while it was copied');
      await writeDurable(path.join(dir, 'snapshot.json'), JSON.stringify({ snapshotId, sourceHandle: handle, createdAt: Date.now() }));
      return { snapshotId };
    } catch (error) {
      await removeTree(dir).catch(() => undefined);
      throw classifyFsError(error, 'snapshot');
    }
  }

  async snapshotStatus(snapshotId: string): Promise<SnapshotStatus> {
    checkSnapshotId('snapshotStatus', snapshotId);
    // Local snapshots never expire: one is usable while its tree is there.
    const tree = await lstat(path.join(this.options.snapshotRoot, snapshotId, 'tree')).catch(() => null);
    return tree?.isDirectory() ? 'usable' : 'missing';
  }

  async deleteSnapshot(snapshotId: string): Promise<void> {
    checkSnapshotId('deleteSnapshot', snapshotId);
    await removeTree(path.join(this.options.snapshotRoot, snapshotId));
  }

  async stop(handle: string, signal: AbortSignal): Promise<void> {
    await this.#setState(handle, 'stopped', 'stop', signal);
  }

  async destroy(handle: string, signal: AbortSignal): Promise<void> {
    const { paths } = this.#paths(handle, 'destroy');
    await this.#locked(paths, signal, async () => {
      const meta = await this.#readMeta(paths).catch(() => null);
      // Only the incarnation named by the handle is destroyed, never a newer one living here.
      if (!meta || meta.handle !== handle) return;
      await rmFile(paths.sandbox);
      await rmFile(paths.ready);
      const doomed = paths.staging(`destroy-${randomBytes(3).toString('hex')}`);
      await rename(paths.root, doomed).catch(() => undefined);
      await removeTree(doomed);
    }).catch((error: unknown) => {
      throw classifyFsError(error, 'destroy');
    });
  }

  // Records running/stopped for the incarnation named by the handle.
  async #setState(handle: string, state: SandboxMeta['state'], operation: string, signal: AbortSignal): Promise<void> {
    const { paths } = this.#paths(handle, operation);
    await this.#locked(paths, signal, async () => {
      const { meta } = await this.#own(handle, operation);
      if (meta.state !== state) await writeDurable(paths.sandbox, JSON.stringify({ ...meta, state }));
    }).catch((e: unknown) => {
      throw classifyFsError(e, operation);
    });
  }
}

// Removes a file the fleet owns (meta files); a missing one is not an error.
async function rmFile(file: string): Promise<void> {
  await unlink(file).catch((error: unknown) => (errnoOf(error) === 'ENOENT' ? undefined : Promise.reject(error)));
}

// Writes `file` as `name` beneath `dir`: a private temporary file, then a rename over the name
// (which replaces a symlink there instead of following it).
async function writeBeneath(dir: DirHandle, name: Buffer, file: FileToWrite, owner: number | undefined): Promise<void> {
  const temp = Buffer.from(`.fleet-tmp-${randomBytes(6).toString('hex')}`);
  const out = await dir.openFile(temp, CREATE_FILE_FLAGS, 0o600);
  try {
    await out.writeFile(file.content);
    if (owner !== undefined) await out.chown(owner, owner);
    await out.chmod((file.mode ?? 0o644) & WRITABLE_MODE_BITS);
  } finally {
    await out.close();
  }
  try {
    await dir.rename(temp, dir, name);
  } catch (error) {
    await dir.unlink(temp).catch(() => undefined);
    if (errnoOf(error) === 'EISDIR' || errnoOf(error) === 'ENOTEMPTY') {
      throw new PayloadInvalidError('path', [{ field: 'path', message: 'names a directory of the workspace tree', value: name.toString() }]);
    }
    throw error;
  }
}

// Reads the regular file `name` beneath `dir`; null when it is missing or anything but a regular file.
async function readBeneath(dir: DirHandle, name: Buffer): Promise<Buffer | null> {
  let input;
  try {
    input = await dir.openFile(name, READ_FILE_FLAGS);
  } catch (error) {
    // Missing, a symlink (never followed) or under a non-directory.
    if (['ENOENT', 'ELOOP', 'ENOTDIR'].includes(errnoOf(error) ?? '')) return null;
    throw error;
  }
  try {
    if (!(await input.stat()).isFile()) return null;
    return await input.readFile();
  } finally {
    await input.close();
  }
}
