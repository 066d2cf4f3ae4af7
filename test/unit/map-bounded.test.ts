// mapBounded: order kept, at most `limit` in flight, and a failure stops new items and waits for those in flight.
import { describe, expect, it } from 'vitest';
import { mapBounded } from '../../src/lib/map-bounded.js';

// A promise settled from outside.
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('mapBounded', () => {
  it('keeps the input order and never runs more than the limit at once', async () => {
    let inFlight = 0;
    let most = 0;
    const out = await mapBounded([5, 1, 4, 2, 3, 0], 2, async (n) => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      for (let i = 0; i < n; i++) await Promise.resolve();
      inFlight -= 1;
      return n * 10;
    });
    expect(out).toEqual([50, 10, 40, 20, 30, 0]);
    expect(most).toBe(2);
  });

  // Item 1 stops the map (it throws, or aborts the signal) while item 0 is still in flight.
  const aborting = new AbortController();
  const stops: { how: string; stop: (i: number) => void; reason: string; signal?: AbortSignal }[] = [
    { how: 'after a failure', stop: (i) => { throw new Error(`item ${i} failed`); }, reason: 'item 1 failed' },
    { how: 'once the signal is aborted', stop: () => aborting.abort(new Error('stopped')), reason: 'stopped', signal: aborting.signal },
  ];
  for (const { how, stop, reason, signal } of stops) {
    it(`${how} starts nothing more, and rejects only once every call in flight has ended`, async () => {
      const slow = deferred();
      const started: number[] = [];
      let slowEnded = false;
      const fn = async (i: number): Promise<number> => {
        started.push(i);
        if (i === 0) {
          await slow.promise;
          slowEnded = true;
        } else stop(i);
        return i;
      };
      const run = mapBounded([0, 1, 2, 3, 4], 2, fn, signal);
      let settled = false;
      run.catch(() => undefined).finally(() => (settled = true));
      for (let i = 0; i < 20; i++) await Promise.resolve();
      expect(started).toEqual([0, 1]);
      expect(settled).toBe(false);
      slow.resolve();
      await expect(run).rejects.toThrow(reason);
      expect(slowEnded).toBe(true);
      expect(started).toEqual([0, 1]);
    });
  }

  it('a call that throws before its first await fails the same way', async () => {
    const fn = (i: number): Promise<number> => {
      if (i === 1) throw new Error('synchronous');
      return Promise.resolve(i);
    };
    await expect(mapBounded([0, 1, 2], 1, fn)).rejects.toThrow('synchronous');
  });
});
