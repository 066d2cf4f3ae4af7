// Deterministic pseudo-random numbers (mulberry32) so a failing randomized run can be replayed
// from its seed. The one generator of the tests, chaos and the benchmarks.
import { createCipheriv } from 'node:crypto';

export interface Rng {
  (): number;
  /** A whole number from `min` to `max`, both included. */
  int(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
  /** `size` bytes that look random (incompressible, never deduplicated by chance), from the stream. */
  bytes(size: number): Buffer;
}

export function rng(seed: number): Rng {
  let state = seed | 0;
  const next = (() => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }) as Rng;
  next.int = (min, max) => min + Math.floor(next() * (max - min + 1));
  next.pick = (items) => items[Math.floor(next() * items.length)]!;
  // AES-CTR keyed from the stream: megabytes cost microseconds, where a draw per byte would not.
  next.bytes = (size) => {
    const key = Buffer.alloc(16);
    for (let i = 0; i < 4; i++) key.writeUInt32LE(Math.floor(next() * 4294967296), i * 4);
    return createCipheriv('aes-128-ctr', key, Buffer.alloc(16)).update(Buffer.alloc(size));
  };
  return next;
}

/**
 * The seed of a randomized crash test: `variable` from the environment replays a run, otherwise
 * one from the clock. The test names it in its assertion messages.
 */
export function seedFrom(variable: string): number {
  const raw = process.env[variable];
  const seed = raw === undefined ? Date.now() % 100_000 : Number(raw);
  if (!Number.isSafeInteger(seed)) throw new Error(`${variable}: expected a whole number, got ${JSON.stringify(raw)}`);
  return seed;
}
