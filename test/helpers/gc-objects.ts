// Helpers of the objects GC tests: an objects GC without grace (only the writers' registry keeps
// a writer's work), backdating files (as objects stored days ago), and what a revision reaches.
import { execFileSync } from 'node:child_process';
import { flattenTree } from '../../src/archive/revision-reader.js';
import { objectsKind } from '../../src/gc/objects-kind.js';
import { GC_RUNNERS, runGc, type GcResult } from '../../src/gc/run-gc.js';
import type { Harness } from './workspace-harness.js';

/** Seconds since the epoch of "long ago" (2023): older than any grace. */
export const LONG_AGO = 1_700_000_000;

/** The GC kinds with an objects kind of grace 0. */
export const GRACE_0_RUNNERS = { ...GC_RUNNERS, objects: objectsKind({ graceMs: 0 }) };

/** Every file below `dir` gets an old mtime (as files an agent wrote hours ago, or objects stored days ago). */
export const backdate = (dir: string): void => void execFileSync('find', [dir, '-exec', 'touch', '-h', '-d', `@${LONG_AGO}`, '{}', '+']);

/** One real run of the grace-0 objects GC. */
export const objectsGc = (h: Harness): Promise<GcResult> => runGc(h.services, { kind: 'objects', dryRun: false, limit: 1_000 }, AbortSignal.timeout(30_000), GRACE_0_RUNNERS);

/** Every object and tree a revision's record reaches. */
export async function reachedBy(h: Harness, ws: string, revision: string): Promise<Set<string>> {
  const record = (await h.services.archive.readRecord(ws, revision))!;
  const trees: string[] = [];
  const entries = await flattenTree(h.services.archive.objects, record.root, (id) => trees.push(id));
  return new Set([...trees, ...entries.flatMap((e) => (e.t === 'f' ? [e.h!] : []))]);
}
