// Hand-made ustar archives for the extractor's safety tests (entries real tar would refuse to write).
export interface FixtureEntry {
  readonly name: string;
  /** ustar typeflag: '0' file, '1' hard link, '2' symlink, '3' char device, '5' dir, '6' fifo, 'x' pax. */
  readonly type?: string;
  readonly content?: string | Buffer;
  readonly linkname?: string;
  readonly mode?: number;
  readonly mtime?: number;
}

// Writes `value` as a NUL-padded octal field.
function octal(header: Buffer, offset: number, length: number, value: number): void {
  header.write(value.toString(8).padStart(length - 1, '0'), offset, length - 1, 'latin1');
}

/** One header block plus padded content. */
export function tarEntry(entry: FixtureEntry): Buffer {
  const content = typeof entry.content === 'string' ? Buffer.from(entry.content) : (entry.content ?? Buffer.alloc(0));
  const header = Buffer.alloc(512);
  header.write(entry.name, 0, 100, 'utf8');
  octal(header, 100, 8, entry.mode ?? 0o644);
  octal(header, 108, 8, 0);
  octal(header, 116, 8, 0);
  octal(header, 124, 12, content.length);
  octal(header, 136, 12, entry.mtime ?? 1_700_000_000);
  header.fill(0x20, 148, 156);
  header.write(entry.type ?? '0', 156, 1, 'latin1');
  header.write(entry.linkname ?? '', 157, 100, 'utf8');
  header.write('ustar\u000000', 257, 8, 'latin1');
  let sum = 0;
  for (const byte of header) sum += byte;
  header.write(`${sum.toString(8).padStart(6, '0')}\u0000 `, 148, 8, 'latin1');
  const padding = Buffer.alloc((512 - (content.length % 512)) % 512);
  return Buffer.concat([header, content, padding]);
}

/** A pax extended header carrying `records` for the next entry. */
export function paxEntry(records: Record<string, string>): Buffer {
  const body = Object.entries(records)
    .map(([key, value]) => {
      const record = ` ${key}=${value}\n`;
      let length = Buffer.byteLength(record) + 1;
      while (String(length).length + Buffer.byteLength(record) !== length) length += 1;
      return `${length}${record}`;
    })
    .join('');
  return tarEntry({ name: 'PaxHeader', type: 'x', content: body });
}

/** A complete archive (entries + two zero blocks). */
export function tarArchive(...entries: Buffer[]): Buffer {
  return Buffer.concat([...entries, Buffer.alloc(1024)]);
}

/** The archive as a stream of small chunks (exercises reads across chunk boundaries). */
export async function* chunked(archive: Buffer, size = 333): AsyncGenerator<Buffer> {
  for (let at = 0; at < archive.length; at += size) yield archive.subarray(at, at + size);
}
