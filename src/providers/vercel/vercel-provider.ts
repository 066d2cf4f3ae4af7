/**
 * `SandboxProvider` on Vercel Sandbox, through the real `@vercel/sandbox` SDK (3.5.0).
 *
 * - handle = the sandbox name (`sandbox-name.ts`), the SDK's durable key; sessions come and go.
 * - tree = `/vercel/sandbox/workspace`; ready marker = `/vercel/sandbox/.fleet/ready.json`
 *   (`vercel-paths.ts` explains why the marker sits outside the tree).
 * - `openTree` returns the host's mirror of the tree, brought up to date by transferring only
 *   what changed (`sync-mirror.ts`); `destroy` removes that mirror.
 * - Every method wraps its SDK calls in `withDeadline` (caller's signal + `operationTimeoutMs`)
 *   and throws only classified provider errors (`classify-vercel-error.ts`).
 * - Session calls on a stopped sandbox resume it (the SDK's auto-resume on HTTP 410).
 */
import { Sandbox, Snapshot } from '@vercel/sandbox';
import type { Config } from '../../config.js';
import type {
  CreateRequest,
  ExecRequest,
  ExecResult,
  FileToWrite,
  ReadyMarker,
  SandboxInfo,
  SandboxProvider,
  SnapshotStatus,
  OpenTreeOptions,
  TreeSource,
  TakenSnapshot,
} from '../sandbox-provider.js';
import { SnapshotUnavailableError } from '../snapshot-unavailable-error.js';
import { snapshotStatus } from './snapshot-status.js';
import { ProviderPermanentError } from '../provider-errors.js';
import { hasStatus } from './classify-vercel-error.js';
import { EXEC_DEADLINE_SLACK_MS, execInSandbox } from './exec-in-sandbox.js';
import { importTree } from './import-tree.js';
import { clearReady, markReady, readReady } from './ready-marker.js';
import { runScript } from './run-script.js';
import { describeSandbox, fleetTags, VERCEL_HOST_ID } from './sandbox-info.js';
import { SANDBOX_NAME_PREFIX, sandboxName } from './sandbox-name.js';
import { removeMirror } from './remove-mirror.js';
import { snapshotSandbox } from './snapshot-sandbox.js';
import { syncMirror, type MirrorOptions } from './sync-mirror.js';
import { PREPARE_SCRIPT } from './tree-scripts.js';
import { vercelConnection, type VercelConnection } from './vercel-connection.js';
import { treePath, treeRelativePath } from './vercel-paths.js';
import { withDeadline } from './with-deadline.js';

export interface VercelProviderOptions {
  readonly connection: VercelConnection;
  /** The host-side mirrors persist reads sandbox trees from (sync-mirror.ts). */
  readonly mirror: MirrorOptions;
  /** Sent as `persistent` at create; unset leaves the server default (persistent). */
  readonly persistent?: boolean;
  /** Session lifetime sent as `timeout` at create; unset leaves the server default (5 min). */
  readonly sandboxTimeoutMs?: number;
  /** Cap on one provider operation, on top of the caller's signal. @default 600000 (10 min) */
  readonly operationTimeoutMs?: number;
  /** Interval of the snapshot readiness poll. @default 500 */
  readonly pollIntervalMs?: number;
  /** Page size of `list`. @default 100 */
  readonly listPageSize?: number;
  /** PATH for host tools (`mkfifo` when a format 2 revision is materialized for a restore). */
  readonly systemPath?: string;
}

const DEFAULT_OPERATION_TIMEOUT_MS = 10 * 60_000;
const DEFAULT_POLL_INTERVAL_MS = 500;
const DEFAULT_LIST_PAGE_SIZE = 100;

export class VercelProvider implements SandboxProvider {
  readonly name = 'vercel' as const;
  private readonly connection: VercelConnection;
  private readonly operationTimeoutMs: number;

  constructor(private readonly options: VercelProviderOptions) {
    this.connection = options.connection;
    this.operationTimeoutMs = options.operationTimeoutMs ?? DEFAULT_OPERATION_TIMEOUT_MS;
  }

  async create(request: CreateRequest): Promise<{ handle: string; hostId: string }> {
    const name = sandboxName(request.workspaceId, request.generation);
    return this.run('create', request.signal, async (signal) => {
      const sandbox = await this.createOrAdopt(name, request, signal);
      await runScript(sandbox, { operation: 'create', script: PREPARE_SCRIPT, signal });
      return { handle: name, hostId: VERCEL_HOST_ID };
    });
  }

  async get(handle: string, signal: AbortSignal): Promise<SandboxInfo | null> {
    return this.run('get', signal, async (deadline) => {
      try {
        return describeSandbox(await this.sandbox(handle, deadline));
      } catch (error) {
        if (hasStatus(error, 404)) return null;
        throw error;
      }
    });
  }

  async resume(handle: string, signal: AbortSignal): Promise<void> {
    await this.run('resume', signal, (deadline) => Sandbox.get({ ...this.connection, name: handle, resume: true, signal: deadline }));
  }

  async list(signal: AbortSignal): Promise<SandboxInfo[]> {
    return this.run('list', signal, async (deadline) => {
      const pages = await Sandbox.list({
        ...this.connection,
        namePrefix: SANDBOX_NAME_PREFIX,
        limit: this.options.listPageSize ?? DEFAULT_LIST_PAGE_SIZE,
        signal: deadline,
      });
      const infos: SandboxInfo[] = [];
      for await (const meta of pages) {
        const info = describeSandbox(meta);
        if (info !== null) infos.push(info);
      }
      return infos;
    });
  }

  async exec(handle: string, request: ExecRequest): Promise<ExecResult> {
    return withDeadline('exec', request.signal, request.timeoutMs + EXEC_DEADLINE_SLACK_MS, async (deadline) => execInSandbox(await this.sandbox(handle, deadline), request, deadline));
  }

  async writeFiles(handle: string, files: readonly FileToWrite[], signal: AbortSignal): Promise<void> {
    const entries = files.map((file) => ({ path: treePath(this.checkedPath('writeFiles', file.path)), content: file.content, mode: file.mode }));
    await this.run('writeFiles', signal, async (deadline) => (await this.sandbox(handle, deadline)).writeFiles(entries, { signal: deadline }));
  }

  async readFile(handle: string, path: string, signal: AbortSignal): Promise<Buffer | null> {
    const relative = this.checkedPath('readFile', path);
    return this.run('readFile', signal, async (deadline) => (await this.sandbox(handle, deadline)).readFileToBuffer({ path: treePath(relative) }, { signal: deadline }));
  }

  async openTree(handle: string, signal: AbortSignal, options: OpenTreeOptions = {}): Promise<TreeSource> {
    return this.run('openTree', signal, async (deadline) => syncMirror(await this.sandbox(handle, deadline), handle, { ...this.options.mirror, settle: options.settle === true, ...(options.seed ? { seed: options.seed } : {}) }, deadline));
  }

  async importTree(handle: string, from: string, signal: AbortSignal): Promise<void> {
    await this.run('importTree', signal, async (deadline) => importTree(await this.sandbox(handle, deadline), from, deadline, this.options.systemPath));
  }

  async markReady(handle: string, marker: ReadyMarker, signal: AbortSignal): Promise<void> {
    await this.run('markReady', signal, async (deadline) => markReady(await this.sandbox(handle, deadline), marker, deadline));
  }

  async readReady(handle: string, signal: AbortSignal): Promise<ReadyMarker | null> {
    return this.run('readReady', signal, async (deadline) => readReady(await this.sandbox(handle, deadline), deadline));
  }

  async clearReady(handle: string, signal: AbortSignal): Promise<void> {
    await this.run('clearReady', signal, async (deadline) => clearReady(await this.sandbox(handle, deadline), deadline));
  }

  async snapshot(handle: string, options: { expirationMs: number; signal: AbortSignal }): Promise<TakenSnapshot> {
    return this.run('snapshot', options.signal, (deadline) =>
      snapshotSandbox({
        connection: this.connection,
        name: handle,
        expirationMs: options.expirationMs,
        pollIntervalMs: this.options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS,
        signal: deadline,
      }),
    );
  }

  async snapshotStatus(snapshotId: string, signal: AbortSignal): Promise<SnapshotStatus> {
    return this.run('snapshotStatus', signal, (deadline) => snapshotStatus(this.connection, snapshotId, deadline));
  }

  async deleteSnapshot(snapshotId: string, signal: AbortSignal): Promise<void> {
    await this.run('deleteSnapshot', signal, async (deadline) => {
      try {
        const snapshot = await Snapshot.get({ ...this.connection, snapshotId, signal: deadline });
        if (snapshot.status !== 'deleted') await snapshot.delete({ signal: deadline });
      } catch (error) {
        if (!hasStatus(error, 404, 410)) throw error;
      }
    });
  }

  async stop(handle: string, signal: AbortSignal): Promise<void> {
    await this.run('stop', signal, async (deadline) => {
      const sandbox = await this.sandbox(handle, deadline);
      if (sandbox.status !== 'running' && sandbox.status !== 'pending') return;
      try {
        await sandbox.stop({ signal: deadline });
      } catch (error) {
        // Stopped between our read and the stop: the goal is reached.
        if (!hasStatus(error, 410)) throw error;
      }
    });
  }

  async destroy(handle: string, signal: AbortSignal): Promise<void> {
    await this.run('destroy', signal, async (deadline) => {
      try {
        await (await this.sandbox(handle, deadline)).delete({ signal: deadline });
      } catch (error) {
        if (!hasStatus(error, 404)) throw error;
      }
      // Best effort: the mirror is a cache (a leftover costs disk, never correctness).
      await removeMirror(this.options.mirror.root, handle).catch(() => undefined);
    });
  }

  // Runs one operation under the caller's signal and the operation cap, classifying errors.
  private run<T>(operation: string, signal: AbortSignal, fn: (deadline: AbortSignal) => Promise<T>): Promise<T> {
    return withDeadline(operation, signal, this.operationTimeoutMs, fn);
  }

  // The SDK handle of a sandbox (no resume: session calls resume it on demand).
  private sandbox(name: string, signal: AbortSignal): Promise<Sandbox> {
    return Sandbox.get({ ...this.connection, name, signal });
  }

  // Creates the named sandbox; when the name is taken (HTTP 409: a retried create already went
  // through, or a previous attempt of this generation), adopts that sandbox instead.
  private async createOrAdopt(name: string, request: CreateRequest, signal: AbortSignal): Promise<Sandbox> {
    const params = {
      ...this.connection,
      name,
      ...(this.options.persistent !== undefined ? { persistent: this.options.persistent } : {}),
      ...(this.options.sandboxTimeoutMs !== undefined ? { timeout: this.options.sandboxTimeoutMs } : {}),
      env: { ...(request.env ?? {}) },
      tags: fleetTags(request.workspaceId, request.generation),
      signal,
    };
    const source = request.source;
    try {
      // Base and workspace snapshots are both provider-native snapshots: `source: { type: 'snapshot' }`.
      if (source.type === 'empty') return await Sandbox.create(request.runtime ? { ...params, runtime: request.runtime } : params);
      return await Sandbox.create({ ...params, source: { type: 'snapshot', snapshotId: source.snapshotId } });
    } catch (error) {
      // The source snapshot expired or was deleted: permanent, never a retried "gone" (issue 19.9).
      if (source.type !== 'empty' && hasStatus(error, 404, 410)) {
        const status = await snapshotStatus(this.connection, source.snapshotId, signal);
        if (status !== 'usable') throw new SnapshotUnavailableError('vercel', 'create', source.snapshotId, status, { cause: error });
      }
      if (!hasStatus(error, 409)) throw error;
      return Sandbox.get({ ...this.connection, name, resume: true, signal });
    }
  }

  // A tree-relative path from the caller, or a permanent error for one that leaves the tree.
  private checkedPath(operation: string, path: string): string {
    const relative = treeRelativePath(path);
    if (relative === null || relative === '') throw new ProviderPermanentError('vercel', operation, 'path must name a file inside the tree', { context: { path } });
    return relative;
  }
}

/** The provider configured by `Config.vercel` (throws `ConfigError` without credentials); mirrors under `Config.paths.vercelMirrorRoot`. */
export function createVercelProvider(config: Config, options: Partial<Omit<VercelProviderOptions, 'connection'>> = {}): VercelProvider {
  const mirror = options.mirror ?? { root: config.paths.vercelMirrorRoot, limits: config.treeLimits, systemPath: options.systemPath ?? config.systemPath };
  return new VercelProvider({ ...options, mirror, connection: vercelConnection(config.vercel) });
}
