/**
 * The one rule for a path that comes out of a sandbox (a listing record, an archive entry):
 * relative to the tree, never absolute, no `..` segment, no NUL. `.` and empty segments are
 * dropped, so `./a//b/` is `a/b`. Paths are raw bytes: names need not be UTF-8.
 */
export type RelativeCheck = { readonly ok: true; readonly rel: Buffer } | { readonly ok: false; readonly reason: string };

const SLASH = 0x2f;
const DOT = 0x2e;

/** `input` normalised to `a/b` (the empty buffer for the root), or why it could escape. */
export function checkRelative(input: Buffer): RelativeCheck {
  if (input.includes(0)) return { ok: false, reason: 'contains a NUL byte' };
  if (input[0] === SLASH) return { ok: false, reason: 'is absolute' };
  const segments: Buffer[] = [];
  let start = 0;
  for (let i = 0; i <= input.length; i++) {
    if (i < input.length && input[i] !== SLASH) continue;
    const segment = input.subarray(start, i);
    start = i + 1;
    if (segment.length === 0 || (segment.length === 1 && segment[0] === DOT)) continue;
    if (segment.length === 2 && segment[0] === DOT && segment[1] === DOT) return { ok: false, reason: 'climbs out with ..' };
    segments.push(segment);
  }
  return { ok: true, rel: joinSegments(segments) };
}

// `a/b/c` from its segments.
function joinSegments(segments: readonly Buffer[]): Buffer {
  const parts: Buffer[] = [];
  for (const [i, segment] of segments.entries()) {
    if (i > 0) parts.push(Buffer.of(SLASH));
    parts.push(segment);
  }
  return Buffer.concat(parts);
}

/** The parent (`a/b` of `a/b/c`, empty at the top) and the last component of a normalised path. */
export function splitRelative(rel: Buffer): { readonly parent: Buffer; readonly name: Buffer } {
  const slash = rel.lastIndexOf(SLASH);
  return slash < 0 ? { parent: Buffer.alloc(0), name: rel } : { parent: rel.subarray(0, slash), name: rel.subarray(slash + 1) };
}

/** Path components of a normalised path. */
export function depthOf(rel: Buffer): number {
  let depth = rel.length === 0 ? 0 : 1;
  for (const byte of rel) if (byte === SLASH) depth += 1;
  return depth;
}
