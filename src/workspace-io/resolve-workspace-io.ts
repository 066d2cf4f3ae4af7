/**
 * The one resolver of a workspace's files for app pods (HTTP, CLI): each operation goes to the
 * one authoritative place.
 *
 * - The address store names a live incarnation → **warm**: the operation goes to that sandbox
 *   through its provider (this host's local sandbox, another host's through its hostops queue,
 *   the Vercel SDK). A read or write of a file uses the provider's no-follow file calls; list,
 *   stat and remove run fixed commands in the sandbox (live-tree-commands.ts).
 * - No address → **cold**: reads come from the archive's current revision (or the one named);
 *   a write or removal commits a new revision, claimed and fenced (cold-write.ts). If a sandbox
 *   appears meanwhile the claim is refused and the write goes warm.
 * - A live sandbox that does not answer in time is **busy**: the call is tried again with growing
 *   deadlines, then fails with WorkspaceBusy; it is never rebuilt and never written around.
 *   **Gone** (not found, connection refused, host dead): provisioned again (restored from the
 *   archive) and the call is retried once.
 * - A `revision` always reads the archive, live or not.
 * - `exec` needs a live sandbox (WorkspaceNotFound otherwise); busy is not retried (a command may
 *   have side effects), gone is rebuilt before it runs.
 */
import type { ArchiveStore } from '../archive/archive-store.js';
import type { Config } from '../config.js';
import { FileNotFoundError } from '../errors/file-not-found-error.js';
import { NotAFileError } from '../errors/not-a-file-error.js';
import { PayloadInvalidError } from '../errors/payload-invalid-error.js';
import { PayloadTooLargeError } from '../errors/payload-too-large-error.js';
import { StaleGenerationError } from '../errors/stale-generation-error.js';
import { WorkspaceBusyError } from '../errors/workspace-busy-error.js';
import { WorkspaceNotFoundError } from '../errors/workspace-not-found-error.js';
import type { FleetClient } from '../producers/fleet-client.js';
import { ProviderBusyError, ProviderGoneError, ProviderPermanentError } from '../providers/provider-errors.js';
import type { SandboxProvider } from '../providers/sandbox-provider.js';
import type { Address, AddressStore } from '../state/address-store.js';
import type { QuotaStore } from '../state/quota-store.js';
import { listCold, readCold, statCold } from './cold-io.js';
import { coldWrite, type ColdWriteDeps } from './cold-write.js';
import { dirPath, filePath } from './io-path.js';
import { listCommand, missing, parseEntries, removeCommand, siteOf, statCommand } from './live-tree-commands.js';
import { checkQuota, writeDelta } from './quota-check.js';
import type { IoSource, TreeEntry, WorkspaceIo } from './workspace-io.js';
import { anySignal } from '../lib/any-signal.js';

export interface WorkspaceIoDeps extends Omit<ColdWriteDeps, 'systemPath'> {
  readonly addresses: Pick<AddressStore, 'get' | 'claimCold' | 'touch'>;
  readonly archive: ArchiveStore;
  readonly client: Pick<FleetClient, 'provision'>;
  readonly quota: Pick<QuotaStore, 'usage' | 'moved' | 'limits'>;
  readonly config: Pick<Config, 'systemPath' | 'exec' | 'http' | 'deadlines'>;
  providerFor(address: Address): SandboxProvider;
}

/** Deadline of warm attempt `n` (1-based): 2 s, 4 s, 8 s, ... capped at 30 s. */
export const warmDeadlineMs = (attempt: number): number => Math.min(30_000, 2_000 * 2 ** (attempt - 1));
/** Attempts at a busy sandbox before WorkspaceBusy. */
export const WARM_ATTEMPTS = 3;
/** Cold writes retried when a provision won the race for the generation (the next try goes warm). */
const COLD_RACE_RETRIES = 3;
/** Wait for the rebuild of a gone sandbox. */
const REBUILD_WAIT_MS = 120_000;

const live = (address: Address): IoSource => ({ kind: 'live', handle: address.handle, generation: address.generation });
const archived = (revision: string | null): IoSource => ({ kind: 'archive', revision });

// A provider's busy answer, or any failure once this attempt's own deadline passed.
const isBusy = (error: unknown, attempt: AbortSignal): boolean => error instanceof ProviderBusyError || attempt.aborted;

export function resolveWorkspaceIo(deps: WorkspaceIoDeps): WorkspaceIo {
  const coldDeps: ColdWriteDeps = { ...deps, systemPath: deps.config.systemPath };

  // Runs `fn` against the live sandbox: busy → again with a longer deadline; gone → rebuilt once.
  async function warm<T>(workspaceId: string, operation: string, address: Address, signal: AbortSignal, fn: (provider: SandboxProvider, address: Address, signal: AbortSignal) => Promise<T>, deadline = warmDeadlineMs, attempts = WARM_ATTEMPTS): Promise<T> {
    let current = address;
    let rebuilt = false;
    for (let attempt = 1; ; attempt++) {
      const timer = AbortSignal.timeout(deadline(attempt));
      try {
        const result = await fn(deps.providerFor(current), current, anySignal([signal, timer]));
        await deps.addresses.touch(workspaceId).catch(() => undefined);
        return result;
      } catch (error) {
        signal.throwIfAborted();
        if (error instanceof ProviderGoneError && !rebuilt) {
          rebuilt = true;
          const { result } = await deps.client.provision({ workspaceId, requestedBy: `workspace-io:${operation}` }, { wait: true, timeoutMs: REBUILD_WAIT_MS });
          current = (await deps.addresses.get(workspaceId)) ?? { ...current, handle: result!.handle, generation: result!.generation, hostId: result!.hostId, provider: result!.provider };
          attempt = 0;
          continue;
        }
        if (!isBusy(error, timer)) throw error;
        if (attempt >= attempts) throw new WorkspaceBusyError(workspaceId, operation, attempt, error);
      }
    }
  }

  // Runs a fixed command in the sandbox with `cwd` (opened beneath the root by handles, locally);
  // null when `cwd` is not a directory of the tree (missing, a file, or a symlink: never followed).
  async function runIn(provider: SandboxProvider, handle: string, cwd: string, cmd: string[], signal: AbortSignal) {
    try {
      return await provider.exec(handle, { cmd, ...(cwd ? { cwd } : {}), timeoutMs: deps.config.deadlines.execMs, env: deps.config.exec.env, signal });
    } catch (error) {
      if (cwd && (error instanceof PayloadInvalidError || error instanceof ProviderPermanentError)) return null;
      throw error;
    }
  }

  // The entry at `parts` of the live tree; null when nothing is there.
  async function liveStat(provider: SandboxProvider, handle: string, path: string, parts: readonly string[], signal: AbortSignal): Promise<TreeEntry | null> {
    const site = siteOf(parts);
    const result = await runIn(provider, handle, site.cwd, statCommand(site), signal);
    return !result || missing(result) ? null : (parseEntries(result.stdout, path)[0] ?? null);
  }

  // The size of what is at `path` now (null: nothing), for the quota rule.
  async function sizeAt(workspaceId: string, path: string, signal: AbortSignal): Promise<number | null> {
    const { entry } = await io.stat({ workspaceId, path, signal });
    return entry ? entry.size : null;
  }

  // A write or removal with no sandbox live; null when one appeared (then the caller goes warm).
  async function cold(workspaceId: string, path: string, parts: readonly string[], content: Buffer | null, mode: number | undefined, signal: AbortSignal) {
    for (let attempt = 1; ; attempt++) {
      try {
        return await coldWrite(coldDeps, { workspaceId, path, parts, content, ...(mode === undefined ? {} : { mode }), signal });
      } catch (error) {
        // A provision bumped the generation between the claim and the attach: nothing landed.
        if (!(error instanceof StaleGenerationError) || attempt >= COLD_RACE_RETRIES) throw error;
        if (await deps.addresses.get(workspaceId)) return null;
      }
    }
  }

  const io: WorkspaceIo = {
    async read({ workspaceId, path, revision, signal }) {
      const { parts } = filePath(path);
      const address = revision ? null : await deps.addresses.get(workspaceId);
      if (!address) {
        const read = await readCold(deps.archive, workspaceId, path, parts, revision);
        if (read.content.length > deps.config.http.fileMaxBytes) throw new PayloadTooLargeError(deps.config.http.fileMaxBytes);
        return { content: read.content, source: archived(read.revision) };
      }
      return warm(workspaceId, 'readFile', address, signal, async (provider, at, s) => {
        const content = await provider.readFile(at.handle, path, s);
        if (content === null) {
          const { entry } = await io.stat({ workspaceId, path, signal: s });
          if (entry) throw new NotAFileError(workspaceId, path, entry.type === 'dir' ? 'a directory' : `a ${entry.type}`);
          throw new FileNotFoundError(workspaceId, path, 'live tree');
        }
        if (content.length > deps.config.http.fileMaxBytes) throw new PayloadTooLargeError(deps.config.http.fileMaxBytes);
        return { content, source: live(at) };
      });
    },

    async write({ workspaceId, path, content, mode, signal }) {
      const { parts } = filePath(path);
      if (content.length > deps.config.http.fileMaxBytes) throw new PayloadTooLargeError(deps.config.http.fileMaxBytes);
      // The quota needs what is there now (one stat); with no limit configured neither is spent.
      const limited = deps.quota.limits.bytes > 0 || deps.quota.limits.files > 0;
      const delta = limited ? writeDelta(await sizeAt(workspaceId, path, signal), content.length) : null;
      if (delta) checkQuota(workspaceId, deps.quota.limits, await deps.quota.usage(workspaceId), delta);
      for (;;) {
        const address = await deps.addresses.get(workspaceId);
        let source: IoSource;
        if (address) {
          source = await warm(workspaceId, 'writeFiles', address, signal, async (provider, at, s) => {
            await provider.writeFiles(at.handle, [{ path, content, ...(mode === undefined ? {} : { mode }) }], s);
            return live(at);
          });
        } else {
          const written = await cold(workspaceId, path, parts, content, mode, signal);
          if (!written) continue;
          source = archived(written.revision);
        }
        if (delta) await deps.quota.moved(workspaceId, delta);
        return { source, bytes: content.length };
      }
    },

    async remove({ workspaceId, path, signal }) {
      const { parts } = filePath(path);
      for (;;) {
        const address = await deps.addresses.get(workspaceId);
        if (address) {
          return warm(workspaceId, 'remove', address, signal, async (provider, at, s) => {
            const entry = await liveStat(provider, at.handle, path, parts, s);
            if (!entry) return { source: live(at), removed: false };
            const site = siteOf(parts);
            const result = await runIn(provider, at.handle, site.cwd, removeCommand(site), s);
            if (!result) return { source: live(at), removed: false };
            if (result.exitCode !== 0) throw new NotAFileError(workspaceId, path, `not removable (${result.stderr.trim().slice(0, 200)})`);
            await deps.quota.moved(workspaceId, { bytes: -entry.size, files: entry.type === 'file' ? -1 : 0 });
            return { source: live(at), removed: true };
          });
        }
        const { entry } = await statCold(deps.archive, workspaceId, path, parts);
        if (!entry) return { source: archived(await deps.archive.current(workspaceId)), removed: false };
        const written = await cold(workspaceId, path, parts, null, undefined, signal);
        if (!written) continue;
        await deps.quota.moved(workspaceId, { bytes: -entry.size, files: entry.type === 'file' ? -1 : 0 });
        return { source: archived(written.revision), removed: true };
      }
    },

    async stat({ workspaceId, path, revision, signal }) {
      const { path: at, parts } = dirPath(path);
      const address = revision ? null : await deps.addresses.get(workspaceId);
      if (!address) {
        const found = await statCold(deps.archive, workspaceId, at, parts, revision);
        return { entry: found.entry, source: archived(found.revision) };
      }
      return warm(workspaceId, 'stat', address, signal, async (provider, a, s) => ({ entry: await liveStat(provider, a.handle, at, parts, s), source: live(a) }));
    },

    async list({ workspaceId, path, revision, signal }) {
      const { path: at, parts } = dirPath(path);
      const address = revision ? null : await deps.addresses.get(workspaceId);
      if (!address) {
        const found = await listCold(deps.archive, workspaceId, at, parts, revision);
        return { entries: found.entries, source: archived(found.revision) };
      }
      return warm(workspaceId, 'list', address, signal, async (provider, a, s) => {
        const entry = await liveStat(provider, a.handle, at, parts, s);
        if (!entry) throw new FileNotFoundError(workspaceId, at || '.', 'live tree');
        if (entry.type !== 'dir') throw new NotAFileError(workspaceId, at, `a ${entry.type} (not a directory)`);
        const result = await runIn(provider, a.handle, at, listCommand(), s);
        if (!result) throw new NotAFileError(workspaceId, at, 'not a directory of the tree (a symlink is never followed)');
        const entries = parseEntries(result.stdout, at).sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0));
        return { entries, source: live(a) };
      });
    },

    async exec({ workspaceId, cmd, cwd, env, stdin, timeoutMs, onStdout, onStderr, signal }) {
      // A command needs a live sandbox: it is never run against the archive, nor provisioned implicitly.
      const address = await deps.addresses.get(workspaceId);
      if (!address) throw new WorkspaceNotFoundError(workspaceId);
      // One attempt with the command's own deadline: a command is never run twice for a busy sandbox (it may have side effects); a gone one is rebuilt first.
      return warm(workspaceId, 'exec', address, signal, async (provider, at, s) => {
        const result = await provider.exec(at.handle, {
          cmd,
          ...(cwd ? { cwd } : {}),
          env: { ...deps.config.exec.env, ...(env ?? {}) },
          ...(stdin === undefined ? {} : { stdin }),
          timeoutMs,
          signal: s,
          ...(onStdout ? { onStdout } : {}),
          ...(onStderr ? { onStderr } : {}),
        });
        return { ...result, source: live(at) };
      }, () => timeoutMs + 5_000, 1);
    },
  };
  return io;
}
