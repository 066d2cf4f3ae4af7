/**
 * `SandboxProvider` on Vercel Sandbox, through the real `@vercel/sandbox` SDK (3.5.0).
 *
 * - one durable sandbox name per workspace (`sandbox-name.ts`), the SDK's durable key; sessions
 *   come and go, and so do generations: handle = `vercel:<name>:g<generation>` (`vercel-handle.ts`),
 *   and every call for a handle reaches only a sandbox tagged with its generation
 *   (`generation-fence.ts`); to an old handle a replaced incarnation is gone.
 * - tree = `/vercel/sandbox/workspace`; ready marker = `/vercel/sandbox/.fleet/ready.json`
 *   (`vercel-paths.ts` explains why the marker sits outside the tree).
 * - `listTree` lists the tree and streams the files a persist asks for straight into the
 *   archive's store (`list-tree.ts`: a format 2 persist needs no host copy);
 * - `openTree` returns the host's mirror of the tree (format 1 and backfill), brought up to date
 *   by transferring only what changed (`sync-mirror.ts`); `destroy` removes that mirror.
 * - Every method wraps its SDK calls in `withDeadline` (caller's signal + `operationTimeoutMs`)
 *   and throws only classified provider errors (`classify-vercel-error.ts`).
 * - Session calls on a stopped sandbox resume it (the SDK's auto-resume on HTTP 410).
 */
import { Sandbox, Snapshot } from '@vercel/sandbox';
import type { Config } from '../../config.js';
import type {
  CreatedSandbox,
  CreateRequest,
  ExecRequest,
  ExecResult,
  FileToWrite,
  ReadyMarker,
  SandboxInfo,
  SandboxProvider,
  SnapshotStatus,
  TreeSource,
  ListedTree,
  TakenSnapshot,
} from '../sandbox-provider.js';
import { SnapshotUnavailableError } from '../snapshot-unavailable-error.js';
import { snapshotStatus } from './snapshot-status.js';
import { ProviderBusyError, ProviderPermanentError } from '../provider-errors.js';
import { hasStatus } from './classify-vercel-error.js';
import { EXEC_DEADLINE_SLACK_MS, execInSandbox } from './exec-in-sandbox.js';
import { importTree } from './import-tree.js';
import { clearReady, markReady, readReady } from './ready-marker.js';
import { runScript } from './run-script.js';
import { describeSandbox, fleetTags, VERCEL_HOST_ID } from './sandbox-info.js';
import { SANDBOX_NAME_PREFIX, sandboxName } from './sandbox-name.js';
import { fencedFetch } from './generation-fence.js';
import { parseVercelHandle, vercelHandle, type VercelIncarnation } from './vercel-handle.js';
import { GENERATION_TAG } from './sandbox-info.js';
import { removeMirror } from './remove-mirror.js';
import { snapshotSandbox } from './snapshot-sandbox.js';
import { syncMirror, type MirrorOptions } from './sync-mirror.js';
import { listTree } from './list-tree.js';
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

/** Replacing an older incarnation that holds the name: how many times a create may find the name taken. */
const CREATE_ATTEMPTS = 3;

export class VercelProvider implements SandboxProvider {
  readonly name = 'vercel' as const;
  readonly handleKind = 'persistent-name' as const;
  private readonly connection: VercelConnection;
  private readonly operationTimeoutMs: number;

  constructor(private readonly options: VercelProviderOptions) {
    this.connection = options.connection;
    this.operationTimeoutMs = options.operationTimeoutMs ?? DEFAULT_OPERATION_TIMEOUT_MS;
  }

  async create(request: CreateRequest): Promise<CreatedSandbox> {
    const name = sandboxName(request.workspaceId);
    return this.run('create', request.signal, async (signal) => {
      const sandbox = await this.createOrAdopt(name, request, signal);
      await runScript(sandbox, { operation: 'create', script: PREPARE_SCRIPT, signal });
      const sessionId = sessionOf(sandbox);
      return { handle: vercelHandle(name, request.generation), hostId: VERCEL_HOST_ID, ...(sessionId ? { sessionId } : {}) };
    });
  }

  async get(handle: string, signal: AbortSignal): Promise<SandboxInfo | null> {
    return this.run('get', signal, async (deadline) => {
      try {
        const sandbox = await this.sandbox(handle, deadline);
        return describeSandbox({
          name: sandbox.name,
          status: sandbox.status,
          tags: sandbox.tags,
          createdAt: sandbox.createdAt,
          currentSessionId: sessionOf(sandbox),
          currentSnapshotId: sandbox.currentSnapshotId,
        });
      } catch (error) {
        if (hasStatus(error, 404)) return null;
        throw error;
      }
    });
  }

  async resume(handle: string, signal: AbortSignal): Promise<void> {
    await this.run('resume', signal, (deadline) => this.sandbox(handle, deadline, true));
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

  async openTree(handle: string, signal: AbortSignal): Promise<TreeSource> {
    return this.run('openTree', signal, async (deadline) => syncMirror(await this.sandbox(handle, deadline), handle, this.options.mirror, deadline));
  }

  async listTree(handle: string, signal: AbortSignal): Promise<ListedTree> {
    const { root, limits } = this.options.mirror;
    return this.run('openTree', signal, async (deadline) => listTree(await this.sandbox(handle, deadline), handle, { root, limits, call: (s, fn) => this.run('openTree', s, fn) }));
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
    const incarnation = this.incarnation('snapshot', handle);
    return this.run('snapshot', options.signal, (deadline) =>
      snapshotSandbox({
        connection: this.connectionFor(incarnation),
        name: incarnation.name,
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
        // The fenced get first: a handle whose incarnation was replaced deletes nothing.
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

  // The SDK handle of an incarnation, fenced to its generation (no resume unless asked: session
  // calls resume it on demand, and the fence holds for those resumes too).
  private sandbox(handle: string, signal: AbortSignal, resume = false): Promise<Sandbox> {
    const incarnation = this.incarnation('get', handle);
    return Sandbox.get({ ...this.connectionFor(incarnation), name: incarnation.name, signal, ...(resume ? { resume: true } : {}) });
  }

  // What a handle names, or a permanent error for one that is no Vercel handle.
  private incarnation(operation: string, handle: string): VercelIncarnation {
    const incarnation = parseVercelHandle(handle);
    if (incarnation === null) throw new ProviderPermanentError('vercel', operation, 'not a Vercel sandbox handle', { context: { handle } });
    return incarnation;
  }

  // The connection for calls of one incarnation: a durable name's are fenced to its generation.
  private connectionFor(incarnation: VercelIncarnation): VercelConnection {
    if (!incarnation.durable) return this.connection;
    return { ...this.connection, fetch: fencedFetch(this.connection.fetch ?? globalThis.fetch, incarnation.name, incarnation.generation) };
  }

  // Creates the workspace's sandbox under its durable name. The name may be taken (HTTP 409): by
  // this very generation (a retried create went through, or an earlier attempt), which is
  // adopted; by an older one, which the generation bump has fenced and which is deleted so the
  // name can pass on; by a newer one, which means this creator is stale.
  private async createOrAdopt(name: string, request: CreateRequest, signal: AbortSignal): Promise<Sandbox> {
    const incarnation: VercelIncarnation = { name, generation: request.generation, durable: true };
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.createNamed(incarnation, request, signal);
      } catch (error) {
        if (!hasStatus(error, 409) || attempt >= CREATE_ATTEMPTS) throw error;
      }
      let holder: Sandbox;
      try {
        holder = await Sandbox.get({ ...this.connection, name, signal });
      } catch (error) {
        // Deleted meanwhile: the name is free again.
        if (hasStatus(error, 404)) continue;
        throw error;
      }
      const held = Number(holder.tags?.[GENERATION_TAG] ?? Number.NaN);
      if (held === request.generation) return Sandbox.get({ ...this.connectionFor(incarnation), name, resume: true, signal });
      // Retried, the stale creator's provisioning decides afresh (and finds the newer incarnation).
      if (held > request.generation) {
        throw new ProviderBusyError('vercel', 'create', `the name is held by a newer generation (${held}): this creator (generation ${request.generation}) is stale`, {
          context: { sandboxName: name, generation: request.generation, held },
        });
      }
      try {
        await holder.delete({ signal });
      } catch (error) {
        if (!hasStatus(error, 404)) throw error;
      }
    }
  }

  private async createNamed(incarnation: VercelIncarnation, request: CreateRequest, signal: AbortSignal): Promise<Sandbox> {
    const name = incarnation.name;
    const params = {
      ...this.connectionFor(incarnation),
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
      throw error;
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

// The current session id of an SDK sandbox, when it has one.
function sessionOf(sandbox: Sandbox): string | undefined {
  try {
    return sandbox.currentSession().sessionId;
  } catch {
    return undefined;
  }
}
