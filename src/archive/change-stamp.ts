/**
 * The line a walk draws in time: an entry whose status changed at or after it may have changed
 * after the walk read it, so the next walk looks at it again (the change scan lists it, the quick
 * check hashes it again: git's racily-clean rule). Everything before it the walk saw as it is.
 *
 * The line must lie at or before the moment the walk begins, on the clock the tree's own
 * filesystem stamps changes with: the kernel's coarse clock, in the filesystem's granularity (a
 * second on some). The host's clock minus a margin (`RACY_MARGIN_NS`) is such a line anywhere, at
 * the cost of every entry changed in the margin before a walk being looked at again by the next
 * one: under an agent that writes and then persists, that is most of every change, read twice.
 *
 * Exact, where it can be had: the walk touches a marker file beside the tree's stat cache (the
 * host's, never in the tree) and takes the ctime the filesystem gave it. When the marker sits on
 * the tree's own filesystem (the same device), any change after the touch gets a ctime at least
 * that (one clock, one granularity, and kernels with fine-grained timestamps never hand out one
 * earlier than a fine one already given), and a change in the same tick gets the same ctime: at
 * or after the line, whatever that filesystem's granularity or clock (a network filesystem's
 * server stamps the marker as it stamps the tree). A marker that cannot be touched, is not a
 * regular file or sits on another device gives the margin's line instead. A walk that meets an
 * entry of another device (a mount inside the tree) keeps the margin's line too (store-builder.ts
 * `foreignDevice`).
 */
import { closeSync, constants, fstatSync, futimesSync, openSync } from 'node:fs';

/**
 * The margin behind the host's clock when the filesystem's own stamp cannot be had: kernel
 * timestamps tick at most every 10 ms (HZ=100 coarse clocks); one second leaves room for that,
 * for filesystems that keep seconds, and for a clock that was stepped.
 */
export const RACY_MARGIN_NS = 1_000_000_000n;
const MARKER_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** The line of a walk begun at `startedNs` on the host's clock. */
export const clockLine = (startedNs: bigint): bigint => startedNs - RACY_MARGIN_NS;

/**
 * The filesystem's own stamp for a walk about to begin of a tree on device `treeDev`: the ctime
 * it gives `marker` when touched, or null when that is no exact line (no marker, one that cannot
 * be touched or is not a regular file, or one on another device): the caller then draws
 * `clockLine`. Synchronous: four syscalls on a host directory.
 */
export function stampChangeLine(marker: string | null, treeDev: bigint): bigint | null {
  if (marker === null) return null;
  let fd: number;
  try {
    // Not followed: a symlink put in its place (ELOOP) only costs the exact line.
    fd = openSync(marker, MARKER_FLAGS, 0o600);
  } catch {
    return null;
  }
  try {
    // Any change of the inode's times sets its ctime to the filesystem's now.
    futimesSync(fd, 0, 0);
    const stats = fstatSync(fd, { bigint: true });
    return stats.isFile() && stats.dev === treeDev ? stats.ctimeNs : null;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}
