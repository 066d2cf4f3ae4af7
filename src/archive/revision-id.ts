/**
 * Revision ids are never reused: a UTC timestamp (sortable, readable at 3 a.m.), the generation
 * and 6 random base-36 characters, e.g. `r20261130T101530123Z-g3-k7f2q9`. They do not depend
 * on Redis, so a Redis that forgot recent writes cannot hand out an id twice.
 */
import { randomInt } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

export function newRevisionId(generation: number, now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('.', ''); // 20261130T101530123Z
  let suffix = '';
  for (let i = 0; i < 6; i++) suffix += ALPHABET[randomInt(ALPHABET.length)];
  return `r${stamp}-g${generation}-${suffix}`;
}
