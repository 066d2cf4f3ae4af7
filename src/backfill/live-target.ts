/**
 * Where a backfill lands besides the archive. A workspace with a live incarnation (published,
 * of the current generation, on a live host, confirmed by its provider, ready) would lose the
 * backfilled files at its next reconcile persist, which mirrors the live tree. So the files the
 * live tree lacks are written into it too (never over an existing live path), and the revision
 * is attached fenced on that incarnation's generation. Without a live incarnation the revision
 * is attached on the workspace's generation, bumped above the archive's floor when the
 * workspace never had one, so the attach fence has a value.
 *
 * Deferred (retryable) when writing into the live tree is not possible from here: the
 * incarnation is mid-restore, or it is a local sandbox on another host.
 */
import type { ArchiveStore } from '../archive/archive-store.js';
import { absoluteBytes } from '../archive/tree-walk.js';
import { BackfillDeferredError } from '../errors/backfill-deferred-error.js';
import { isProviderError } from '../providers/provider-errors.js';
import type { FileToWrite, SandboxProvider } from '../providers/sandbox-provider.js';
import type { Address, AddressStore } from '../state/address-store.js';
import type { HostRegistry } from '../state/host-registry.js';
import { readFile } from 'node:fs/promises';
import type { LegacyFile } from './legacy-source.js';
import { pathState } from './path-state.js';
import type { PathConflict } from './plan-backfill.js';

export interface LiveTargetDeps {
  readonly addresses: AddressStore;
  readonly archive: ArchiveStore;
  readonly hosts: HostRegistry;
  readonly hostId: string;
  providerFor(address: Address): SandboxProvider;
}

export interface LiveIncarnation {
  readonly address: Address;
  readonly provider: SandboxProvider;
}

export interface Target {
  /** Generation the revision is made and attached with. */
  readonly generation: number;
  readonly live: LiveIncarnation | null;
}

/** Bytes per `writeFiles` call (the provider holds a call's contents in memory). */
const WRITE_CHUNK_BYTES = 16 * 1024 * 1024;

// The published incarnation if it is live and ready; null when there is none to protect.
async function liveIncarnation(deps: LiveTargetDeps, address: Address, signal: AbortSignal): Promise<LiveIncarnation | null> {
  if (!(await deps.hosts.isAlive(address.hostId, address.provider, deps.hostId))) return null;
  if (address.provider === 'local' && address.hostId !== deps.hostId) {
    throw new BackfillDeferredError(`workspace ${address.workspaceId} is live on host ${address.hostId}; its backfill must run there`, { context: { workspaceId: address.workspaceId, hostId: address.hostId } });
  }
  const provider = deps.providerFor(address);
  const info = await provider.get(address.handle, signal).catch((error: unknown) => {
    if (isProviderError(error) && error.classification === 'gone') return null;
    throw error;
  });
  if (!info || info.generation !== address.generation) return null;
  const marker = await provider.readReady(address.handle, signal);
  if (marker?.generation !== address.generation) {
    throw new BackfillDeferredError(`workspace ${address.workspaceId}: incarnation g${address.generation} is not ready (restore in progress?)`, { context: { workspaceId: address.workspaceId } });
  }
  return { address, provider };
}

/** The workspace's live incarnation of the current generation, or null when it has none. */
export async function findLive(deps: LiveTargetDeps, workspaceId: string, signal: AbortSignal): Promise<LiveIncarnation | null> {
  const counter = await deps.addresses.generation(workspaceId);
  const address = await deps.addresses.get(workspaceId);
  return address && address.generation === counter ? liveIncarnation(deps, address, signal) : null;
}

/** The generation to commit with (bumped above the archive's floor when the workspace lacks one). */
export async function targetFor(deps: LiveTargetDeps, workspaceId: string, live: LiveIncarnation | null): Promise<Target> {
  if (live) return { generation: live.address.generation, live };
  const counter = await deps.addresses.generation(workspaceId);
  const floor = await deps.archive.maxGeneration(workspaceId);
  const generation = counter >= Math.max(1, floor) ? counter : await deps.addresses.bumpGeneration(workspaceId, floor);
  return { generation, live: null };
}

export interface LiveClassification {
  /** Not in the live tree: written into it. */
  readonly absent: readonly LegacyFile[];
  /** Something is at this path in the live tree: it stays, and the next persist records it. */
  readonly present: readonly LegacyFile[];
  /** An ancestor in the live tree is a file or symlink: the live tree's newer state wins. */
  readonly blocked: readonly PathConflict[];
  /** Not in the live tree, but the provider cannot write the path (not UTF-8): left for later. */
  readonly unwritable: readonly LegacyFile[];
}

/** Sorts files by what the live tree has at their paths. */
export async function classifyLive(treeRoot: string, files: readonly LegacyFile[]): Promise<LiveClassification> {
  const absent: LegacyFile[] = [];
  const present: LegacyFile[] = [];
  const blocked: PathConflict[] = [];
  const unwritable: LegacyFile[] = [];
  const dirs = new Map<string, 'missing' | 'dir' | 'other'>();
  for (const file of files) {
    const state = await pathState(treeRoot, file.rel, dirs);
    if (state === 'present') present.push(file);
    else if (state === 'blocked') blocked.push({ path: file.path, reason: 'an ancestor in the live tree is a file or symlink' });
    // `writeFiles` takes text paths: a path that is not UTF-8 cannot reach the live tree.
    else if (file.path.startsWith('b64:')) unwritable.push(file);
    else absent.push(file);
  }
  return { absent, present, blocked, unwritable };
}

/**
 * Writes files into the live tree, in bounded chunks; `from` is the directory holding their
 * verified copies (format 1) or reads a verified copy (format 2).
 */
export async function writeLiveFiles(provider: SandboxProvider, handle: string, from: string | ((file: LegacyFile) => Promise<Buffer>), files: readonly LegacyFile[], signal: AbortSignal): Promise<void> {
  let chunk: FileToWrite[] = [];
  let bytes = 0;
  for (const file of files) {
    const content = typeof from === 'string' ? await readFile(absoluteBytes(from, file.rel)) : await from(file);
    chunk.push({ path: file.path, content, mode: file.mode });
    bytes += file.size;
    if (bytes >= WRITE_CHUNK_BYTES) {
      await provider.writeFiles(handle, chunk, signal);
      chunk = [];
      bytes = 0;
    }
  }
  if (chunk.length > 0) await provider.writeFiles(handle, chunk, signal);
}
