/**
 * The provider interface shared by `local` (a directory per workspace on a host) and `vercel`
 * (@vercel/sandbox). Provider-neutral code (persist, restore, provision, bake, gc) uses only
 * this interface and never imports a provider SDK.
 *
 * Every method takes an `AbortSignal` (the job's deadline) and throws only classified
 * `ProviderError`s (busy / gone / permanent) for provider failures.
 *
 * Terms:
 * - handle: the provider's durable name of one incarnation (local: `local:<host>:<ws>:g<gen>`,
 *   vercel: the sandbox name).
 * - tree: the workspace files (what the archive stores); the ready marker lives outside it.
 */
import type { FetchedFile, ListedIndex } from '../archive/listing-builder.js';
import type { ListedEntry, Listing } from '../tree/listing.js';

export type ProviderName = 'local' | 'vercel';

/** A provider-native snapshot just taken. */
export interface TakenSnapshot {
  readonly snapshotId: string;
  /** When the provider will delete it (epoch ms); null = never. */
  readonly expiresAt: number | null;
}

/** Where a new incarnation's files come from. */
export type CreateSource =
  | { readonly type: 'empty' }
  /** An app-level base snapshot (first provisioning only). */
  | { readonly type: 'base-snapshot'; readonly snapshotId: string }
  /** A provider-native snapshot of this workspace (restore priority 4). */
  | { readonly type: 'workspace-snapshot'; readonly snapshotId: string };

export interface CreateRequest {
  readonly workspaceId: string;
  readonly generation: number;
  /** Host to place a local sandbox on (ignored by remote providers). */
  readonly hostId?: string;
  readonly source: CreateSource;
  /** Environment given to every command of the sandbox (already allowlisted). */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * The runtime a base manifest names (`node22`, …), for a sandbox made from nothing (a bake's
   * seed): Vercel starts that managed runtime; a local sandbox runs on its host's tools, which the
   * bake's smoke checks must prove. Ignored with a snapshot source (the snapshot has its runtime).
   */
  readonly runtime?: string;
  readonly signal: AbortSignal;
}

export interface SandboxInfo {
  readonly handle: string;
  readonly workspaceId: string;
  readonly generation: number;
  readonly hostId: string;
  readonly state: 'running' | 'stopped';
  /** Epoch ms the incarnation was created (orphan GC leaves young ones alone). */
  readonly createdAt?: number;
  /** The provider's current session of it, where sessions come and go (metadata only). */
  readonly sessionId?: string;
  /** The provider's persisted snapshot of it, where the provider reports one (metadata only). */
  readonly snapshotId?: string;
}

/** Whether a provider-native snapshot can still seed a sandbox. */
export type SnapshotStatus = 'usable' | 'expired' | 'deleted' | 'missing';

/** Written after a complete restore; persist refuses to run without it (G4 gate). */
export interface ReadyMarker {
  readonly generation: number;
  /** Revision restored from, or the snapshot id / `empty`. */
  readonly source: string;
  readonly readyAt: number;
}

export interface ExecRequest {
  readonly cmd: readonly string[];
  /** Working directory relative to the tree root. @default the tree root */
  readonly cwd?: string;
  readonly env?: Readonly<Record<string, string>>;
  /** Data the command reads on its stdin (at most MAX_STDIN_BYTES); without it stdin is empty (/dev/null). */
  readonly stdin?: string;
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
  /** Output chunks as they arrive (the result still carries the first 1 MiB of each stream). */
  readonly onStdout?: (chunk: Buffer) => void;
  readonly onStderr?: (chunk: Buffer) => void;
}

export interface ExecResult {
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly timedOut: boolean;
  readonly durationMs: number;
}

export interface FileToWrite {
  readonly path: string;
  readonly content: Buffer;
  readonly mode?: number;
}

/** What crossed a remote provider's boundary to bring its tree to the host (Vercel). */
export interface TreeTransfer {
  /** Compressed bytes of the tree's listing (every persist moves it). */
  readonly listingBytes: number;
  /** Compressed bytes of the changed files' archive, plus the sandbox's second look at them. */
  readonly archiveBytes: number;
  /** Bytes sent: the list of the files asked for. */
  readonly requestBytes: number;
  /** Files whose content was transferred. */
  readonly files: number;
  /** True when the host had nothing it could reuse (the first persist of an incarnation on this host, a rebuilt mirror). */
  readonly full: boolean;
}

/** A local directory holding the workspace tree, valid until `release()`. */
export interface TreeSource {
  readonly path: string;
  /**
   * Where the host keeps this tree's stat cache (archive format 2), outside every sandbox's view;
   * absent when the tree is a fresh copy each time (its stats say nothing).
   */
  readonly statCache?: string;
  /** Remote providers: what was transferred to bring the tree here. */
  readonly transfer?: TreeTransfer;
  release(): Promise<void>;
}

/** Stores one file's content into the archive (the store hashes it as it streams). */
export type ObjectSink = (content: AsyncIterable<Buffer>) => Promise<{ readonly id: string; readonly bytes: number }>;

/** One listing of a remote tree. */
export interface TreeListing {
  readonly listing: Listing;
  /** May the index record this entry's listed version (not racily clean against the listing's clock)? */
  readonly settled: (entry: ListedEntry) => boolean;
  /** Nothing listed changed while the tree was walked: the listing is the tree at one instant. */
  readonly oneInstant: boolean;
}

/** What a fetch of listed files gave: each stored file's object, by key. */
export interface FetchedFiles {
  readonly stored: ReadonlyMap<string, FetchedFile>;
  /** Files that changed between their listing and the fetch (left out: taken by the next persist). */
  readonly unstable: number;
  /** Archive entries that were not asked for (ignored). */
  readonly unexpected: number;
}

/**
 * A remote tree read without a host copy (`SandboxProvider.listTree`): listings, and the files a
 * persist asks for, streamed into the archive's store. Valid until `release()`.
 */
export interface ListedTree {
  /** Lists the tree (the only transfer when nothing changed). */
  list(signal: AbortSignal): Promise<TreeListing>;
  /** Fetches the listed files `wanted` into `sink`; a file that is not the version listed is left out. */
  fetch(wanted: readonly ListedEntry[], sink: ObjectSink, signal: AbortSignal): Promise<FetchedFiles>;
  /** The index this incarnation wrote for `revision` (null: none, or another incarnation's). */
  loadIndex(revision: string): Promise<ListedIndex | null>;
  saveIndex(revision: string, index: ListedIndex): Promise<void>;
  /** What crossed the boundary so far. */
  transfer(): TreeTransfer;
  release(): Promise<void>;
}

/** A created incarnation: its handle and host, and the provider's session of it where sessions come and go. */
export interface CreatedSandbox {
  readonly handle: string;
  readonly hostId: string;
  readonly sessionId?: string;
}

/**
 * What a handle is (the runtime resource's `handleKind`): a provider name that outlives sessions
 * and generations (Vercel), or a directory on a host (local).
 */
export type HandleKind = 'persistent-name' | 'volume-path';

export interface SandboxProvider {
  readonly name: ProviderName;
  readonly handleKind: HandleKind;

  /** Creates a new incarnation (without ready marker). Returns its handle and host. */
  create(request: CreateRequest): Promise<CreatedSandbox>;
  /** Describes an incarnation; `null` when it is gone. */
  get(handle: string, signal: AbortSignal): Promise<SandboxInfo | null>;
  /** Resumes a stopped incarnation (Vercel persistent sandboxes); local is a no-op when present. */
  resume(handle: string, signal: AbortSignal): Promise<void>;
  /** All incarnations this provider holds (orphan GC). */
  list(signal: AbortSignal): Promise<SandboxInfo[]>;

  /** Runs a command in the tree with a deadline; a non-zero exit is a result, not an error. */
  exec(handle: string, request: ExecRequest): Promise<ExecResult>;
  writeFiles(handle: string, files: readonly FileToWrite[], signal: AbortSignal): Promise<void>;
  /** Reads a file of the tree; `null` when absent. */
  readFile(handle: string, path: string, signal: AbortSignal): Promise<Buffer | null>;

  /** Exposes the tree as a local directory for persist (local: the live tree itself). */
  openTree(handle: string, signal: AbortSignal): Promise<TreeSource>;
  /**
   * Remote providers: the tree as listings, its changed files fetched straight into the archive
   * (a format 2 persist then needs no host copy of the tree). Absent: persist uses `openTree`.
   */
  listTree?(handle: string, signal: AbortSignal): Promise<ListedTree>;
  /** Replaces the tree with the contents of a local directory (restore). Clears the ready marker first. */
  importTree(handle: string, from: string, signal: AbortSignal): Promise<void>;

  /** Writes / reads / clears the generation-tagged ready marker (outside the tree). */
  markReady(handle: string, marker: ReadyMarker, signal: AbortSignal): Promise<void>;
  readReady(handle: string, signal: AbortSignal): Promise<ReadyMarker | null>;
  clearReady(handle: string, signal: AbortSignal): Promise<void>;

  /**
   * Snapshots the incarnation (provider-native). `expirationMs: 0` = never expires. `expiresAt`
   * is what the provider says about the snapshot it made (epoch ms, null = never), so a caller
   * that asked for no expiry can refuse one that will expire anyway.
   */
  snapshot(handle: string, options: { expirationMs: number; signal: AbortSignal }): Promise<TakenSnapshot>;
  /**
   * Whether a provider-native snapshot can seed a sandbox now (checked before a base or workspace
   * snapshot is reused: an expired or deleted one is never trusted).
   */
  snapshotStatus(snapshotId: string, signal: AbortSignal): Promise<SnapshotStatus>;
  /** Deletes a provider-native snapshot (base retirement). Absent snapshots are not an error. */
  deleteSnapshot(snapshotId: string, signal: AbortSignal): Promise<void>;
  stop(handle: string, signal: AbortSignal): Promise<void>;
  /** Destroys an incarnation; destroying a gone one is not an error. */
  destroy(handle: string, signal: AbortSignal): Promise<void>;
}

/** Every method of the provider interface (decorators and the lazy loader forward each one). */
export const PROVIDER_METHODS = [
  'create',
  'get',
  'resume',
  'list',
  'exec',
  'writeFiles',
  'readFile',
  'openTree',
  'importTree',
  'markReady',
  'readReady',
  'clearReady',
  'snapshot',
  'snapshotStatus',
  'deleteSnapshot',
  'stop',
  'destroy',
] as const satisfies readonly Exclude<keyof SandboxProvider, 'name'>[];

/** Methods only some providers have (decorators forward each where the provider has it). */
export const OPTIONAL_PROVIDER_METHODS = ['listTree'] as const satisfies readonly Exclude<keyof SandboxProvider, 'name'>[];
