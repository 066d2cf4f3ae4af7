/**
 * Judging a restored tree against the states an agent really produced (loss-window benchmark).
 *
 * The agent simulator (agent-sim.ts) logs every file operation it completed with a sequence
 * number and a timestamp; every file it writes carries the sequence number of its write. A
 * restored tree is consistent when it equals the state right after some operation S (every
 * operation up to S reflected, none after): a tree mixing two moments matches no state. S is at
 * least the newest write the tree contains (a later write may have been deleted since), so
 * judging is one replay of the log, comparing each state from there on.
 */

/** One completed file operation of the agent (paths relative to the agent's directory). */
export type AgentOp =
  | { readonly seq: number; readonly ts: number; readonly kind: 'write'; readonly path: string; readonly content: string }
  | { readonly seq: number; readonly ts: number; readonly kind: 'delete'; readonly path: string }
  | { readonly seq: number; readonly ts: number; readonly kind: 'rename'; readonly path: string; readonly to: string };

/** What a restored tree was found to be. */
export interface Judgement {
  /** The tree equals the state after operation `seq` (or the baseline, `seq` = baseline's). */
  readonly consistent: boolean;
  /**
   * Not consistent, but the state after `seq` plus files the tree had earlier (deleted or renamed
   * since, with the content they had then): what an upload-only checkpoint leaves (it keeps files
   * the live tree no longer has). A tree that is neither is torn: a mix of two moments.
   */
  readonly uploadOnlyResidue: number;
  /** Newest operation the tree reflects (consistent), else the newest write number it contains. */
  readonly seq: number;
  /** When that operation completed (epoch ms); the baseline's time when it is the baseline. */
  readonly ts: number;
  /** Operations after `seq` that the tree lost, and the bytes they wrote. */
  readonly lostOps: number;
  readonly lostBytes: number;
  /** Completion time of the oldest lost operation (the archive holds nothing done since), null when none was lost. */
  readonly oldestLostTs: number | null;
  /** How a torn tree differs from the state after its newest write (null unless torn). */
  readonly tornDiff: string | null;
  /** A path whose content is not one the agent wrote (a torn write), if any. */
  readonly foreign: string | null;
}

/** The sequence number a file's content carries (`seq=N ...`), or null. */
export function contentSeq(content: string): number | null {
  const match = /^seq=(\d+) /.exec(content);
  return match ? Number(match[1]) : null;
}

function equal(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (b.get(k) !== v) return false;
  return true;
}

/** Applies one operation to a state (path → content). */
export function applyOp(state: Map<string, string>, op: AgentOp): void {
  if (op.kind === 'write') state.set(op.path, op.content);
  else if (op.kind === 'delete') state.delete(op.path);
  else {
    const content = state.get(op.path);
    state.delete(op.path);
    if (content !== undefined) state.set(op.to, content);
  }
}

// How `restored` differs from `state`: missing, extra and changed paths, with a few examples.
function describeDiff(restored: ReadonlyMap<string, string>, state: ReadonlyMap<string, string>): string {
  const seqOf = (content: string | undefined) => (content === undefined ? '-' : String(contentSeq(content)));
  const missing = [...state.keys()].filter((p) => !restored.has(p));
  const extra = [...restored.keys()].filter((p) => !state.has(p));
  const changed = [...state.keys()].filter((p) => restored.has(p) && restored.get(p) !== state.get(p));
  const show = (paths: string[]) => paths.slice(0, 3).map((p) => `${p}@${seqOf(restored.get(p))}/${seqOf(state.get(p))}`).join(',');
  return `vs the state at its newest write: ${missing.length} missing [${show(missing)}], ${extra.length} extra [${show(extra)}], ${changed.length} changed [${show(changed)}] (path@restored/expected seq)`;
}

/**
 * Judges `restored` (path → content) against `baseline` (the state the log starts from, reached
 * at `baselineSeq` / `baselineTs`) and the operations logged since.
 */
export function judgeRestored(
  restored: ReadonlyMap<string, string>,
  baseline: { readonly files: ReadonlyMap<string, string>; readonly seq: number; readonly ts: number },
  log: readonly AgentOp[],
): Judgement {
  let newestWrite = 0;
  let foreign: string | null = null;
  for (const [p, content] of restored) {
    const seq = contentSeq(content);
    if (seq === null) foreign ??= p;
    else newestWrite = Math.max(newestWrite, seq);
  }
  const state = new Map(baseline.files);
  // Every (path, content) the tree ever had since the baseline.
  const seen = new Set([...state].map(([p, c]) => `${p}\0${c}`));
  // The newest state the tree is a superset of, every extra file being one the tree had before.
  const residue = (): number | null => {
    for (const [p, c] of state) if (restored.get(p) !== c) return null;
    for (const [p, c] of restored) if (!state.has(p) && !seen.has(`${p}\0${c}`)) return null;
    return restored.size - state.size;
  };
  let match: { seq: number; ts: number } | null = null;
  let superset: { seq: number; ts: number; extra: number } | null = null;
  const consider = (seq: number, ts: number) => {
    if (equal(state, restored)) match = { seq, ts };
    else {
      const extra = residue();
      if (extra !== null) superset = { seq, ts, extra };
    }
  };
  if (newestWrite <= baseline.seq) consider(baseline.seq, baseline.ts);
  for (const op of log) {
    applyOp(state, op);
    if (op.kind === 'write') seen.add(`${op.path}\0${op.content}`);
    if (op.kind === 'rename' && state.has(op.to)) seen.add(`${op.to}\0${state.get(op.to)}`);
    if (op.seq >= newestWrite) consider(op.seq, op.ts);
  }
  const atNewest = new Map(baseline.files);
  for (const op of log) if (op.seq <= newestWrite) applyOp(atNewest, op);
  const best = (match ?? superset) as { seq: number; ts: number; extra?: number } | null;
  const seq = best?.seq ?? newestWrite;
  const lost = log.filter((op) => op.seq > seq);
  return {
    consistent: match !== null,
    uploadOnlyResidue: match === null && best ? best.extra! : 0,
    seq,
    ts: best?.ts ?? log.find((op) => op.seq === newestWrite)?.ts ?? baseline.ts,
    lostOps: lost.length,
    lostBytes: lost.reduce((sum, op) => sum + (op.kind === 'write' ? Buffer.byteLength(op.content) : 0), 0),
    oldestLostTs: lost[0]?.ts ?? null,
    tornDiff: best ? null : describeDiff(restored, atNewest),
    foreign,
  };
}
