import { describe, expect, it } from 'vitest';
import { FlushAhead } from '../../src/archive/flush-ahead.js';

// A flush the test finishes by hand (resolve or reject), counted.
function manualFlush() {
  const pending: { resolve: () => void; reject: (error: Error) => void }[] = [];
  const flush = () => new Promise<void>((resolve, reject) => pending.push({ resolve, reject }));
  return { flush, pending };
}

describe('FlushAhead', () => {
  it('starts a flush each time another everyBytes were stored, never two at once', async () => {
    const { flush, pending } = manualFlush();
    const ahead = new FlushAhead(flush, 100);
    ahead.add(60);
    expect(pending).toHaveLength(0);
    ahead.add(40);
    expect(pending).toHaveLength(1);
    // While one runs, more bytes start nothing; they count toward the next.
    ahead.add(500);
    expect(pending).toHaveLength(1);
    pending[0]!.resolve();
    await ahead.settle();
    // The bytes stored meanwhile start the next one at the next report.
    ahead.add(0);
    expect(pending).toHaveLength(2);
    pending[1]!.resolve();
    await ahead.settle();
    ahead.add(99);
    expect(pending).toHaveLength(2);
    ahead.add(1);
    expect(pending).toHaveLength(3);
    expect(ahead.started).toBe(3);
    pending[2]!.resolve();
    await ahead.settle();
  });

  it('a failed background flush is not thrown (the commit flush reports it), and settle waits for the one under way', async () => {
    const { flush, pending } = manualFlush();
    const ahead = new FlushAhead(flush, 10);
    ahead.add(10);
    let settled = false;
    const settling = ahead.settle().then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    pending[0]!.reject(new Error('EIO'));
    await settling;
    expect(settled).toBe(true);
    // Nothing under way: settle returns at once, and the next flush can start.
    await ahead.settle();
    ahead.add(10);
    expect(pending).toHaveLength(2);
    pending[1]!.resolve();
    await ahead.settle();
  });
});
