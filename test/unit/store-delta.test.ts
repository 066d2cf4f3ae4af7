// The files of a delta archive a listed persist may take (providers/vercel/store-delta.ts and
// delta-entries.ts): a file asked for and not in the archive counts as unstable when it vanished
// or changed since its listing (the round is then not the listed tree), and not when the second
// look still sees it as listed (only unreadable: the revision keeps what it had).
import { pack } from 'tar-stream';
import { describe, expect, it } from 'vitest';
import { storeDelta } from '../../src/providers/vercel/store-delta.js';
import type { ObjectSink } from '../../src/providers/sandbox-provider.js';
import type { ListedEntry } from '../../src/tree/listing.js';

const CLOCK = 1_700_000_100_000_000_000n;
const listed = (key: string, size: number, ctimeNs = CLOCK - 10_000_000_000n): ListedEntry => ({ rel: Buffer.from(key), key, type: 'file', size, mode: 0o644, mtimeNs: ctimeNs, ctimeNs, ino: 7n, dev: 1n });

async function archiveOf(files: Record<string, string>): Promise<Buffer[]> {
  const p = pack();
  for (const [name, content] of Object.entries(files)) p.entry({ name: `./${name}`, size: Buffer.byteLength(content), mode: 0o644 }, content);
  p.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of p) chunks.push(chunk as Buffer);
  return chunks;
}

async function* from(chunks: Buffer[]): AsyncIterable<Buffer> {
  yield* chunks;
}

const sink: ObjectSink = async (content) => {
  let bytes = 0;
  for await (const chunk of content) bytes += chunk.length;
  return { id: 'a'.repeat(64), bytes, written: true };
};

describe('storeDelta', () => {
  it('counts a wanted file the archive lacks as unstable when it vanished or changed, not when only unreadable', async () => {
    const kept = listed('kept.txt', 5);
    const vanished = listed('vanished.txt', 3);
    const changed = listed('changed.txt', 4);
    const unreadable = listed('unreadable.txt', 6);
    const wanted = new Map([kept, vanished, changed, unreadable].map((e) => [e.key, e]));
    const restat = new Map<string, ListedEntry>([
      [kept.key, kept],
      [changed.key, { ...changed, size: 9, ctimeNs: CLOCK }],
      [unreadable.key, unreadable],
    ]);
    const got = await storeDelta({ source: from(await archiveOf({ 'kept.txt': 'hello' })), wanted, restat, clockNs: CLOCK, sink, signal: new AbortController().signal });
    expect([...got.stored.keys()]).toEqual(['kept.txt']);
    expect(got.unstable).toBe(2);
    expect(got.unexpected).toBe(0);
  });

  it('counts nothing when every wanted file came as listed', async () => {
    const a = listed('a', 1);
    const got = await storeDelta({ source: from(await archiveOf({ a: 'x' })), wanted: new Map([[a.key, a]]), restat: new Map([[a.key, a]]), clockNs: CLOCK, sink, signal: new AbortController().signal });
    expect(got.stored.size).toBe(1);
    expect(got.unstable).toBe(0);
  });
});
