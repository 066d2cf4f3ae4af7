// TarWriter's archives (tar-header.ts entries in chunks) read back by another implementation
// (tar-stream's extract): every entry type, long paths (pax), nanosecond times, owners (past the
// ustar field in pax records), content and padding; chunks go to the sink only when full, or at
// the end; a chunk the sink released is reused, one it kept is never written again.
import { Readable } from 'node:stream';
import { extract } from 'tar-stream';
import { describe, expect, it } from 'vitest';
import { TarWriter } from '../../src/archive/tar-writer.js';

async function readBack(archive: Buffer) {
  const out: { header: Record<string, unknown>; content: Buffer }[] = [];
  const reader = extract();
  Readable.from([archive]).pipe(reader);
  for await (const entry of reader) {
    const parts: Buffer[] = [];
    for await (const part of entry) parts.push(part as Buffer);
    out.push({ header: entry.header as unknown as Record<string, unknown>, content: Buffer.concat(parts) });
  }
  return out;
}

const base = { uid: 1000, gid: 1000, mtimeNs: 1_700_000_000_123_456_789n };

describe('TarWriter', () => {
  it('writes every entry type so that another reader gets back paths, modes, owners, times and content', async () => {
    const chunks: Buffer[] = [];
    const writer = new TarWriter(async (chunk) => void chunks.push(chunk));
    const longPath = `dir/${'n'.repeat(120)}/${'m'.repeat(120)}.txt`;
    await writer.add({ ...base, path: Buffer.from('dir'), type: 'dir', mode: 0o700 });
    await writer.add({ ...base, path: Buffer.from(longPath), type: 'file', mode: 0o640 }, Buffer.from('x'.repeat(1000)));
    await writer.add({ ...base, path: Buffer.from('dir/empty'), type: 'file', mode: 0o600 }, Buffer.alloc(0));
    await writer.add({ ...base, path: Buffer.from('dir/hard'), type: 'hardlink', mode: 0o640, linkpath: Buffer.from(longPath) });
    await writer.add({ ...base, path: Buffer.from('dir/sym'), type: 'symlink', mode: 0o777, linkpath: Buffer.from('../../elsewhere') });
    await writer.add({ ...base, uid: 3_000_000, gid: 3_000_001, path: Buffer.from('dir/fifo'), type: 'fifo', mode: 0o620 });
    expect(chunks).toHaveLength(0);
    await writer.end();
    const archive = Buffer.concat(chunks);
    expect(archive.length % 512).toBe(0);
    expect(archive.subarray(-1024).every((b) => b === 0)).toBe(true);

    const back = await readBack(archive);
    expect(back.map((e) => [e.header.name, e.header.type, e.header.mode])).toEqual([
      ['dir/', 'directory', 0o700],
      [longPath, 'file', 0o640],
      ['dir/empty', 'file', 0o600],
      ['dir/hard', 'link', 0o640],
      ['dir/sym', 'symlink', 0o777],
      ['dir/fifo', 'fifo', 0o620],
    ]);
    expect(back[1]!.content.toString()).toBe('x'.repeat(1000));
    expect(back[3]!.header.linkname).toBe(longPath);
    expect(back[4]!.header.linkname).toBe('../../elsewhere');
    expect(back[1]!.header).toMatchObject({ uid: 1000, gid: 1000 });
    // A uid past the ustar field's 7 octal digits travels in the pax header (GNU tar reads it: extract-revision.test.ts).
    expect(back[5]!.header.pax).toMatchObject({ uid: '3000000', gid: '3000001' });
    expect((back[1]!.header.pax as Record<string, string>).mtime).toBe('1700000000.123456789');
  });

  it('hands the sink full chunks as it goes, and the rest at the end', async () => {
    const sizes: number[] = [];
    const writer = new TarWriter(async (chunk) => void sizes.push(chunk.length));
    for (let i = 0; i < 100; i++) await writer.add({ ...base, path: Buffer.from(`f${i}`), type: 'file', mode: 0o644 }, Buffer.alloc(10_000, i));
    expect(sizes.length).toBeGreaterThan(1);
    expect(sizes.every((size) => size >= 256 * 1024)).toBe(true);
    await writer.end();
    const total = sizes.reduce((a, b) => a + b, 0);
    // Each entry: a pax header (the time's fraction) with its records block, the ustar header, 10,000 bytes padded to 10,240; then two zero blocks.
    expect(total).toBe(100 * (512 + 512 + 512 + 10_240) + 1024);
  });

  it('reuses a chunk only once the sink released it, and the archive read back is whole either way', async () => {
    const entries = Array.from({ length: 200 }, (_, i) => ({ path: `f${i}`, content: Buffer.alloc(10_000 + i, i % 251) }));
    const write = async (release: boolean) => {
      const copies: Buffer[] = [];
      const kept: Buffer[] = [];
      const memory = new Set<ArrayBufferLike>();
      const writer = new TarWriter(async (chunk, done) => {
        memory.add(chunk.buffer);
        // What a pipe does: the bytes leave, then the chunk is released.
        copies.push(Buffer.from(chunk));
        if (release) done();
        else kept.push(chunk);
      });
      for (const e of entries) await writer.add({ ...base, path: Buffer.from(e.path), type: 'file', mode: 0o644 }, e.content);
      await writer.end();
      return { copies, kept, memory };
    };
    const released = await write(true);
    expect(released.copies.length).toBeGreaterThan(5);
    // One chunk handed out at a time and released at once: the writer fills at most two buffers in turn.
    expect(released.memory.size).toBeLessThanOrEqual(2);
    const back = await readBack(Buffer.concat(released.copies));
    expect(back.map((e) => e.header.name)).toEqual(entries.map((e) => e.path));
    back.forEach((e, i) => expect(e.content.equals(entries[i]!.content), entries[i]!.path).toBe(true));

    const unreleased = await write(false);
    expect(unreleased.memory.size).toBe(unreleased.copies.length);
    // Every chunk the sink kept still holds exactly the bytes it was handed.
    unreleased.kept.forEach((chunk, i) => expect(chunk.equals(unreleased.copies[i]!)).toBe(true));
  });
});
