// Random legacy workspaces with odd names, for the backfill's zero-loss tests.
import { encodePath } from '../../src/archive/tree-walk.js';
import { encodeBlobName } from '../../src/backfill/blob-name.js';
import type { FileMap } from './legacy-store.js';

// Segment makers: ordinary, spaces, unicode, leading dashes, newlines, shell metacharacters,
// invalid UTF-8, slash look-alikes, dot files, long names.
const SEGMENTS: ((n: number, random: () => number) => Buffer)[] = [
  (n) => Buffer.from(`f${n}.txt`),
  (n) => Buffer.from(`my file ${n}.txt`),
  (n) => Buffer.from(`日本語-${n}.md`),
  (n) => Buffer.from(`emoji-😀-${n}`),
  (n) => Buffer.from(`-rf-${n}`),
  (n) => Buffer.from(`--help=${n}`),
  (n) => Buffer.from(`line\nbreak-${n}`),
  (n) => Buffer.from(`tab\tq'uo"te\\$\`*?[${n}]`),
  (n) => Buffer.concat([Buffer.from([0xff, 0xfe, 0x80]), Buffer.from(`-${n}`)]),
  (n) => Buffer.from(`fraction\u2044slash-${n}`),
  (n) => Buffer.from(`full\uff0fwidth-${n}`),
  (n) => Buffer.from(`.hidden-${n}`),
  (n) => Buffer.from(`..dots-${n}`),
  (n, random) => Buffer.from(`long-${n}-${'x'.repeat(20 + Math.floor(random() * 100))}`),
];

/** A random tree: encoded path → content, paths never prefix one another, blob names <= 255 bytes. */
export function randomTree(random: () => number, maxFiles = 40): FileMap {
  const files: FileMap = new Map();
  const dirs = new Set<string>();
  const count = 1 + Math.floor(random() * maxFiles);
  for (let n = 0; files.size < count && n < count * 4; n++) {
    const depth = Math.floor(random() * 4);
    const parts = Array.from({ length: depth + 1 }, (_, i) => SEGMENTS[Math.floor(random() * SEGMENTS.length)]!(n * 10 + i, random));
    const rel = Buffer.concat(parts.flatMap((p, i) => (i === 0 ? [p] : [Buffer.from('/'), p])));
    if (encodeBlobName(rel).length > 255) continue;
    const p = encodePath(rel);
    const ancestors = parts.slice(0, -1).map((_, i) => encodePath(Buffer.concat(parts.slice(0, i + 1).flatMap((q, j) => (j === 0 ? [q] : [Buffer.from('/'), q])))));
    if (files.has(p) || dirs.has(p) || ancestors.some((a) => files.has(a))) continue;
    const size = random() < 0.1 ? 0 : Math.floor(random() * 6_000);
    files.set(p, Buffer.from(Array.from({ length: size }, () => Math.floor(random() * 256))));
    for (const a of ancestors) dirs.add(a);
  }
  return files;
}
