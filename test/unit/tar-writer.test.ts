// TarWriter's archives read back by another implementation (tar-stream's extract): every entry
// type, long paths (pax), nanosecond times, uids past the ustar field, content and padding, and
// chunks handed to the sink only when full (or at the end).
import { Readable } from 'node:stream';
import { extract } from 'tar-stream';
import { describe, expect, it } from 'vitest';
import { TarWriter, type TarEntry } from '../../src/archive/tar-writer.js';

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
    const entries: TarEntry[] = [
      { ...base, path: Buffer.from('dir'), type: 'directory', mode: 0o700 },
      { ...base, path: Buffer.from(longPath), type: 'file', mode: 0o640, content: Buffer.from('x'.repeat(1000)) },
      { ...base, path: Buffer.from('dir/empty'), type: 'file', mode: 0o600, content: Buffer.alloc(0) },
      { ...base, path: Buffer.from('dir/hard'), type: 'link', mode: 0o640, linkPath: Buffer.from(longPath) },
      { ...base, path: Buffer.from('dir/sym'), type: 'symlink', mode: 0o777, linkPath: Buffer.from('../../elsewhere') },
      { ...base, uid: 3_000_000, gid: 3_000_001, path: Buffer.from('dir/fifo'), type: 'fifo', mode: 0o620 },
    ];
    for (const entry of entries) await writer.add(entry);
    expect(chunks).toHaveLength(0);
    await writer.end();
    const archive = Buffer.concat(chunks);
    expect(archive.length % 512).toBe(0);
    expect(archive.subarray(-1024).every((b) => b === 0)).toBe(true);

    const back = await readBack(archive);
    expect(back.map((e) => [e.header.name, e.header.type, e.header.mode])).toEqual([
      ['dir', 'directory', 0o700],
      [longPath, 'file', 0o640],
      ['dir/empty', 'file', 0o600],
      ['dir/hard', 'link', 0o640],
      ['dir/sym', 'symlink', 0o777],
      ['dir/fifo', 'fifo', 0o620],
    ]);
    expect(back[1]!.content.toString()).toBe('x'.repeat(1000));
    expect(back[3]!.header.linkname).toBe(longPath);
    expect(back[4]!.header.linkname).toBe('../../elsewhere');
    // A uid past the ustar field's 7 octal digits travels in the pax header (GNU tar reads it: extract-revision.test.ts).
    expect(back[5]!.header.pax).toMatchObject({ uid: '3000000', gid: '3000001' });
    expect(back[1]!.header).toMatchObject({ uid: 1000, gid: 1000 });
    expect((back[1]!.header.pax as Record<string, string>).mtime).toBe('1700000000.123456789');
  });

  it('hands the sink full chunks as it goes, and the rest at the end', async () => {
    const sizes: number[] = [];
    const writer = new TarWriter(async (chunk) => void sizes.push(chunk.length));
    for (let i = 0; i < 100; i++) await writer.add({ ...base, path: Buffer.from(`f${i}`), type: 'file', mode: 0o644, content: Buffer.alloc(10_000, i) });
    expect(sizes.length).toBeGreaterThan(1);
    expect(sizes.every((size) => size >= 256 * 1024)).toBe(true);
    await writer.end();
    const total = sizes.reduce((a, b) => a + b, 0);
    // Each entry: pax header block + records block + ustar header + 10,000 bytes padded to 10,240; then two zero blocks.
    expect(total).toBe(100 * (512 + 512 + 512 + 10_240) + 1024);
  });

  it('refuses a time before 1970 instead of writing a wrong one', async () => {
    const writer = new TarWriter(async () => undefined);
    await expect(writer.add({ ...base, mtimeNs: -1n, path: Buffer.from('old'), type: 'file', mode: 0o644, content: Buffer.alloc(1) })).rejects.toThrow(RangeError);
  });
});
