/**
 * Names of the flat blob store: one file per workspace file, the path's '/' replaced by U+2215
 * DIVISION SLASH '∕' (UTF-8 e2 88 95), e.g. `src∕app∕main.py`.
 *
 * What the encoding allows: a Linux file name is any bytes but '/' and NUL, at most 255 bytes.
 * So a legacy path may contain newlines, tabs, spaces, a leading '-', invalid UTF-8 and so on
 * (all kept byte-exact); it can never contain NUL, and at most 255 bytes of encoded name means
 * every segment also fits the archive's 255-byte limit. A workspace file whose own name
 * contains '∕' cannot be told apart from a separator (it was split on the way in).
 *
 * Refused (hostile) names decode to an absolute path, an empty segment ('∕a', 'a∕∕b', 'a∕'),
 * a '.' or '..' segment, or contain NUL or '/'.
 */
const SEPARATOR = Buffer.from('\u2215', 'utf8');
const SLASH = 0x2f;
const SLASH_BYTES = Buffer.from('/');

export type DecodedName = { readonly rel: Buffer } | { readonly problem: string };

/** Splits `bytes` on every occurrence of `separator`. */
function split(bytes: Buffer, separator: Buffer): Buffer[] {
  const parts: Buffer[] = [];
  let start = 0;
  for (let at = bytes.indexOf(separator, start); at !== -1; at = bytes.indexOf(separator, start)) {
    parts.push(bytes.subarray(start, at));
    start = at + separator.length;
  }
  parts.push(bytes.subarray(start));
  return parts;
}

// Joins parts with a separator.
function join(parts: readonly Buffer[], separator: Buffer): Buffer {
  return Buffer.concat(parts.flatMap((p, i) => (i === 0 ? [p] : [separator, p])));
}

/** Decodes a blob file name into a safe relative path, or names the problem. */
export function decodeBlobName(name: Buffer): DecodedName {
  if (name.includes(0)) return { problem: 'contains NUL' };
  if (name.includes(SLASH)) return { problem: "contains '/'" };
  const segments = split(name, SEPARATOR);
  for (const segment of segments) {
    if (segment.length === 0) return { problem: 'has an empty segment (absolute path, doubled or trailing separator)' };
    if (segment.equals(Buffer.from('.')) || segment.equals(Buffer.from('..'))) return { problem: `has a '${segment.toString()}' segment` };
  }
  return { rel: join(segments, SLASH_BYTES) };
}

/** Encodes a relative path (bytes or text) as a blob file name. */
export function encodeBlobName(rel: Buffer | string): Buffer {
  const bytes = typeof rel === 'string' ? Buffer.from(rel, 'utf8') : rel;
  return join(split(bytes, SLASH_BYTES), SEPARATOR);
}
