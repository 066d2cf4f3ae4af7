/**
 * The shape a committed manifest must have to be trusted by `fleet verify` (format 1, see
 * manifest.ts): a torn, truncated or hand-edited file parses as JSON yet lacks fields, or
 * names another revision, and must not pass as this revision's manifest.
 */
import { z } from 'zod';
import type { RevisionManifest } from './manifest.js';

const Count = z.number().int().nonnegative();

const ManifestEntryShape = z
  .object({
    p: z.string(),
    t: z.enum(['f', 'd', 'l', 'p', 's', 'o']),
    m: Count,
    s: Count.optional(),
    h: z.string().optional(),
    l: z.string().optional(),
  })
  .loose();

export const RevisionManifestShape = z
  .object({
    format: z.literal(1),
    workspaceId: z.string(),
    revision: z.string(),
    generation: Count,
    files: Count,
    bytes: Count,
    treeHash: z.string().regex(/^[0-9a-f]{64}$/),
    entries: z.array(ManifestEntryShape),
  })
  .loose();

/** A manifest read back from disk: trusted, or why not. */
export type ParsedManifest = { readonly ok: true; readonly manifest: RevisionManifest } | { readonly ok: false; readonly reason: string };

/** Parses the text of `workspaceId`/`revision`'s manifest and checks it describes that revision. */
export function parseManifestText(text: string, workspaceId: string, revision: string): ParsedManifest {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'not valid JSON' };
  }
  const parsed = RevisionManifestShape.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return { ok: false, reason: `not a format-1 manifest (${issue.path.join('.') || 'root'}: ${issue.message})` };
  }
  const manifest = parsed.data as unknown as RevisionManifest;
  if (manifest.workspaceId !== workspaceId || manifest.revision !== revision) {
    return { ok: false, reason: `describes ${manifest.workspaceId}/${manifest.revision}` };
  }
  const files = manifest.entries.filter((e) => e.t === 'f');
  const bytes = files.reduce((sum, e) => sum + (e.s ?? 0), 0);
  if (files.length !== manifest.files || bytes !== manifest.bytes) {
    return { ok: false, reason: `counts ${manifest.files} files / ${manifest.bytes} bytes but its entries hold ${files.length} / ${bytes}` };
  }
  return { ok: true, manifest };
}
