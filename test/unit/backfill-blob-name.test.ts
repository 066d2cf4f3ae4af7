// The flat blob name codec: every safe relative path round-trips byte-exactly; hostile names
// are refused with a reason.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeBlobName, encodeBlobName } from '../../src/backfill/blob-name.js';

const SEP = '\u2215';

// Path segments: any bytes but '/', NUL and the separator's bytes, never '.' or '..'.
const segment = fc
  .uint8Array({ minLength: 1, maxLength: 12 })
  .map((bytes) => Buffer.from(bytes.map((b) => (b === 0 || b === 0x2f || b === 0xe2 ? 0x61 : b))))
  .filter((b) => !b.equals(Buffer.from('.')) && !b.equals(Buffer.from('..')));
const relPath = fc.array(segment, { minLength: 1, maxLength: 5 }).map((parts) => Buffer.concat(parts.flatMap((p, i) => (i === 0 ? [p] : [Buffer.from('/'), p]))));

describe('blob names', () => {
  it('round-trips every safe relative path', () => {
    fc.assert(
      fc.property(relPath, (rel) => {
        const name = encodeBlobName(rel);
        expect(name.includes(0x2f)).toBe(false);
        const decoded = decodeBlobName(name);
        expect('rel' in decoded && decoded.rel.equals(rel)).toBe(true);
      }),
      { numRuns: 500, seed: 5_000 },
    );
  });

  it('decodes names with odd but legal characters exactly', () => {
    for (const text of ['src/app/main.py', 'my file.txt', '-rf', '--help/x', 'a\nb/c\td', '日本語/ファイル.md', 'emoji 😀/x', "q'uo\"te$`\\"]) {
      const decoded = decodeBlobName(encodeBlobName(text));
      expect('rel' in decoded ? decoded.rel.toString('utf8') : decoded.problem).toBe(text);
    }
    const invalid = Buffer.from([0xff, 0xfe, 0x2f, 0x41]);
    const decoded = decodeBlobName(encodeBlobName(invalid));
    expect('rel' in decoded && decoded.rel.equals(invalid)).toBe(true);
  });

  it('refuses absolute, empty, dot and dot-dot segments', () => {
    for (const name of [`${SEP}etc${SEP}passwd`, `a${SEP}${SEP}b`, `a${SEP}`, `..${SEP}x`, `a${SEP}..${SEP}b`, `.${SEP}x`, '..', '.', SEP, '']) {
      expect(decodeBlobName(Buffer.from(name)), JSON.stringify(name)).toHaveProperty('problem');
    }
    expect(decodeBlobName(Buffer.from('a\0b'))).toHaveProperty('problem');
    expect(decodeBlobName(Buffer.from('a/b'))).toHaveProperty('problem');
  });

  it('fits every decoded path into the archive: a 255-byte name has segments of at most 255 bytes', () => {
    // 84 one-byte segments + 83 three-byte separators = 333 bytes would not fit; 64 + 63 * 3 = 253 does.
    const rel = Array.from({ length: 64 }, (_, i) => String.fromCharCode(97 + (i % 26))).join('/') + 'xy';
    const name = encodeBlobName(rel);
    expect(name.length).toBe(255);
    const decoded = decodeBlobName(name);
    expect('rel' in decoded && decoded.rel.toString()).toBe(rel);
  });
});
