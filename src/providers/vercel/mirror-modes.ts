/**
 * The permission bits a mirror entry gets for the mode the sandbox listed: what the archive
 * stores for it (no setuid/setgid, see stored-mode.ts). Directories also keep owner rwx, so the
 * fleet can update them in place (what the whole-tree export always did); FIFOs get what mkfifo
 * takes.
 */
import { storedMode } from '../../archive/stored-mode.js';

export const fileMode = (listed: number): number => storedMode(listed);
export const dirMode = (listed: number): number => storedMode(listed) | 0o700;
export const fifoMode = (listed: number): number => listed & 0o777;
