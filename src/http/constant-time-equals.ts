/**
 * Secret comparison that takes the same time wherever the inputs differ: both sides are hashed
 * to equal-length SHA-256 digests first, so `timingSafeEqual` never sees unequal lengths and the
 * length of the secret does not leak either.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

export function constantTimeEquals(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}
