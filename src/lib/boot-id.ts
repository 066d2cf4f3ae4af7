import { readFile } from 'node:fs/promises';

let cached: Promise<string> | null = null;

/**
 * This host's boot id (`/proc/sys/kernel/random/boot_id`, new at every boot). Host-side state
 * that was not made durable (written without fsync) is trusted only by the boot that wrote it.
 */
export function bootId(): Promise<string> {
  cached ??= readFile('/proc/sys/kernel/random/boot_id', 'utf8').then((text) => text.trim());
  return cached;
}
