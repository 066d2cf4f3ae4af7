// tar-header.ts writes headers in place; these are the bytes the straightforward encoder it
// replaced wrote (kept here as the oracle), for random entries of every kind: short and long,
// UTF-8 and raw names, whole and fractional, negative and huge times, sizes and owners past the
// ustar fields. A header that does not fit its buffer writes nothing and says what it needs.
import { describe, expect, it } from 'vitest';
import { TAR_BLOCK, tarHeader, writeTarHeader, type TarHeader, type TarType } from '../../src/archive/tar-header.js';
import { rng } from '../helpers/rng.js';

const NS = 1_000_000_000n;
const MAX_OCTAL_12 = 0o77777777777;
const MAX_OCTAL_8 = 0o7777777;
const FLAG: Record<TarType, string> = { file: '0', hardlink: '1', symlink: '2', dir: '5', fifo: '6' };
const isUtf8 = (bytes: Buffer) => Buffer.from(bytes.toString('utf8'), 'utf8').equals(bytes);

function paxTime(ns: bigint): string {
  const negative = ns < 0n;
  const abs = negative ? -ns : ns;
  const fraction = (abs % NS).toString().padStart(9, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${abs / NS}${fraction ? `.${fraction}` : ''}`;
}

function record(key: string, value: Buffer): Buffer {
  const body = Buffer.concat([Buffer.from(` ${key}=`), value, Buffer.from('\n')]);
  let length = body.length + 1;
  while (String(length).length + body.length !== length) length += 1;
  return Buffer.concat([Buffer.from(String(length)), body]);
}

function octal(block: Buffer, offset: number, length: number, value: number): void {
  block.write(value.toString(8).padStart(length - 1, '0'), offset, length - 1, 'latin1');
}

function ustar(name: Buffer, flag: string, mode: number, size: number, seconds: number, link: Buffer, uid = 0, gid = 0): Buffer {
  const block = Buffer.alloc(512);
  name.copy(block, 0, 0, Math.min(name.length, 100));
  octal(block, 100, 8, mode);
  octal(block, 108, 8, Math.min(uid, MAX_OCTAL_8));
  octal(block, 116, 8, Math.min(gid, MAX_OCTAL_8));
  octal(block, 124, 12, size);
  octal(block, 136, 12, seconds);
  block.fill(0x20, 148, 156);
  block.write(flag, 156, 1, 'latin1');
  link.copy(block, 157, 0, Math.min(link.length, 100));
  block.write('ustar\u000000', 257, 8, 'latin1');
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, '0')}\u0000 `, 148, 8, 'latin1');
  return block;
}

// The encoder before headers were written in place.
function oracle(entry: TarHeader): Buffer {
  const name = entry.type === 'dir' ? Buffer.concat([entry.path, Buffer.from('/')]) : entry.path;
  const link = entry.linkpath ?? Buffer.alloc(0);
  const size = entry.type === 'file' ? entry.size : 0;
  const seconds = entry.mtimeNs / NS;
  const whole = entry.mtimeNs % NS === 0n && seconds >= 0n && seconds <= BigInt(MAX_OCTAL_12);
  const records: Buffer[] = [];
  if (name.length > 100) records.push(record('path', name));
  if (link.length > 100) records.push(record('linkpath', link));
  if ((name.length > 100 && !isUtf8(name)) || (link.length > 100 && !isUtf8(link))) records.unshift(record('hdrcharset', Buffer.from('BINARY')));
  if (size > MAX_OCTAL_12) records.push(record('size', Buffer.from(String(size))));
  if (!whole) records.push(record('mtime', Buffer.from(paxTime(entry.mtimeNs))));
  const uid = entry.uid ?? 0;
  const gid = entry.gid ?? 0;
  if (uid > MAX_OCTAL_8) records.push(record('uid', Buffer.from(String(uid))));
  if (gid > MAX_OCTAL_8) records.push(record('gid', Buffer.from(String(gid))));
  const field = seconds < 0n ? 0 : Number(seconds > BigInt(MAX_OCTAL_12) ? BigInt(MAX_OCTAL_12) : seconds);
  const main = ustar(name, FLAG[entry.type], entry.mode & 0o7777, Math.min(size, MAX_OCTAL_12), field, link, uid, gid);
  if (records.length === 0) return main;
  const body = Buffer.concat(records);
  const padding = Buffer.alloc((512 - (body.length % 512)) % 512);
  return Buffer.concat([ustar(Buffer.from('PaxHeaders/entry'), 'x', 0o644, body.length, field, Buffer.alloc(0)), body, padding, main]);
}

describe('tar headers written in place', () => {
  it('are byte for byte the headers of the encoder they replaced, for 5,000 random entries', () => {
    const random = rng(20261206);
    const types: TarType[] = ['file', 'hardlink', 'symlink', 'dir', 'fifo'];
    const text = (length: number, raw: boolean) => (raw ? Buffer.from(random.bytes(length).map((b) => (b === 0 || b === 0x2f ? 0x41 : b))) : Buffer.from('abcdefghij'.repeat(100).slice(0, length)));
    for (let i = 0; i < 5_000; i++) {
      const type = random.pick(types);
      // Fractions of one digit and of nine, leading zeros, the last second of the ustar field and the first past it.
      const times = [0n, 1_700_000_000n * NS, 1_700_000_000_123_456_789n, 1_700_000_000_500_000_000n, -5n * NS - 1n, BigInt(MAX_OCTAL_12 + 10) * NS, BigInt(random.int(0, 2 ** 31)) * NS + BigInt(random.int(0, 999_999_999)),
        1n, NS - 1n, 7n * NS + 100n, BigInt(MAX_OCTAL_12) * NS + 1n, BigInt(MAX_OCTAL_12 + 1) * NS + 5n, BigInt(random.int(0, 99)) * NS + BigInt(random.int(1, 9)) * 10n ** BigInt(random.int(0, 8))];
      const owners = [0, 1000, MAX_OCTAL_8, MAX_OCTAL_8 + 1, 4_000_000_000];
      const entry: TarHeader = {
        path: text(random.pick([1, 7, 99, 100, 101, 180, 300]), random() < 0.3),
        type,
        mode: random.int(0, 0o177777),
        size: type === 'file' ? random.pick([0, 1, 511, 512, 513, 65_536, MAX_OCTAL_12, MAX_OCTAL_12 + 1, 2 ** 40]) : 0,
        mtimeNs: random.pick(times),
        ...(type === 'symlink' || type === 'hardlink' ? { linkpath: text(random.pick([1, 100, 101, 250]), random() < 0.3) } : {}),
        ...(random() < 0.7 ? { uid: random.pick(owners), gid: random.pick(owners) } : {}),
      };
      const expected = oracle(entry);
      expect(tarHeader(entry).equals(expected), `entry ${i}: ${JSON.stringify({ ...entry, path: entry.path.length, mtimeNs: String(entry.mtimeNs) })}`).toBe(true);
      // In place, at an offset of a larger buffer, the bytes around it untouched.
      const target = Buffer.alloc(expected.length + 3 * TAR_BLOCK, 0xee);
      expect(writeTarHeader(target, 7, entry)).toBe(expected.length);
      expect(target.subarray(7, 7 + expected.length).equals(expected)).toBe(true);
      expect(target.subarray(0, 7).every((b) => b === 0xee) && target.subarray(7 + expected.length).every((b) => b === 0xee)).toBe(true);
    }
  });

  it('writes nothing into a buffer too small for the header, and answers minus the bytes it needs', () => {
    const entry: TarHeader = { path: Buffer.from('a/b.txt'), type: 'file', mode: 0o644, size: 10, mtimeNs: 1_700_000_000_123_456_789n };
    const needed = tarHeader(entry).length;
    expect(needed).toBe(3 * TAR_BLOCK);
    const target = Buffer.alloc(needed + 99, 0xee);
    expect(writeTarHeader(target, 100, entry)).toBe(-needed);
    expect(target.every((b) => b === 0xee)).toBe(true);
    expect(writeTarHeader(target, 99, entry)).toBe(needed);
  });
});
