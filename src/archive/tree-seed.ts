/**
 * What a tree source may take a file from instead of transferring it: the files of the revision
 * a new incarnation was restored from (see `OpenTreeOptions.seed` in providers/sandbox-provider.ts).
 */

/** One file of a seed: what its revision recorded, and where its content is on this host. */
export interface SeedFile {
  readonly size: number;
  /** Stored permission bits. */
  readonly mode: number;
  readonly mtimeNs: bigint;
  /** The archive object holding the content (a host path the fleet owns; nothing in it is a link). */
  readonly path: string;
}

export interface TreeSeed {
  /** Every regular file of the revision, by its path's bytes as a latin1 string. Read only when needed. */
  files(signal: AbortSignal): Promise<ReadonlyMap<string, SeedFile>>;
}
