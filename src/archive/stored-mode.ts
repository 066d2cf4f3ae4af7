/**
 * The permission bits the archive stores for an entry of a live tree: everything but setuid
 * and setgid. The fleet writes revisions as its own user (root in the embedded default), so a
 * stored copy of an agent's setuid file would be a setuid-root file after a restore.
 */
export const STORED_MODE_BITS = 0o1777;

/** Stored permission bits of a source mode. */
export const storedMode = (mode: bigint | number): number => Number(BigInt(mode) & BigInt(STORED_MODE_BITS));
