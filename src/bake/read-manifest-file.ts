/**
 * Reads a manifest file for `fleet bake`: JSON, where a template or overlay file may give `source` (a path
 * relative to the manifest) instead of inline `content`; the content is inlined here so the job
 * payload is self-contained. Validated by the manifest schema (secrets refused, keys named).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { PayloadInvalidError } from '../errors/payload-invalid-error.js';
import { parsePayload } from '../queues/payload.js';
import { BaseManifest } from '../queues/base-manifest.js';

export async function readManifestFile(file: string): Promise<BaseManifest> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new PayloadInvalidError('manifest file', [{ field: file, message: `cannot be read as JSON (${(error as Error).message})` }]);
  }
  const base = path.dirname(path.resolve(file));
  for (const field of ['files', 'overlay'] as const) {
    const list = raw && typeof raw === 'object' ? (raw as Record<string, unknown>)[field] : undefined;
    if (!Array.isArray(list)) continue;
    for (const [i, entry] of (list as Record<string, unknown>[]).entries()) {
      if (entry && typeof entry.source === 'string' && entry.content === undefined) {
        const source = path.resolve(base, entry.source);
        if (!source.startsWith(base + path.sep)) throw new PayloadInvalidError('manifest', [{ field: `${field}.${i}.source`, message: 'must stay inside the manifest directory', value: entry.source }]);
        entry.content = await readFile(source, 'utf8');
        delete entry.source;
      }
    }
  }
  return parsePayload('manifest', BaseManifest, raw);
}
