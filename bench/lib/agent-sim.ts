/**
 * An AI agent simulated from outside its sandbox (loss-window benchmark): it writes straight into
 * the live tree's `agent/` directory a new file every 100 ms carrying a sequence number and a
 * timestamp, plus rewrites, deletes and renames, and ends a turn every few seconds with a
 * reconcile persist it waits for (writes pause meanwhile: the turn is over). Every completed
 * operation goes into a log (loss-judge.ts), so a restored tree can be judged against the states
 * the agent really produced.
 */
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Rng } from '../../test/helpers/rng.js';
import { applyOp, type AgentOp } from './loss-judge.js';

export const AGENT_DIR = 'agent';
const DIRS = 4;
const TICK_MS = 100;
/** Above this many files the agent deletes one every tick, so its tree stays small. */
const MAX_FILES = 150;

/** The agent's files under `root/agent` (path relative to it → content). */
export async function readAgentFiles(root: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const walk = async (rel: string): Promise<void> => {
    const entries = await readdir(path.join(root, AGENT_DIR, rel), { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const child = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) await walk(child);
      else files.set(child, await readFile(path.join(root, AGENT_DIR, child), 'utf8'));
    }
  };
  await walk('');
  return files;
}

/** Ends a turn: a reconcile persist of the workspace, resolved once acknowledged. */
export type TurnEnd = (generation: number, turnId: string) => Promise<void>;

export class AgentSim {
  /** Highest sequence number ever used (never reused, across incarnations). */
  seq = 0;
  /** Highest sequence number covered by an acknowledged turn end of the current incarnation. */
  ackedSeq = 0;
  turns = 0;
  acks = 0;
  failedTurns = 0;
  /** When the current incarnation, restored from the archive, started writing (epoch ms); null for the first one and a live tree that survived. */
  restoredAt: number | null = null;
  /** When its first turn end was acknowledged (null: none yet, so nothing of it is durable beyond the restored state). */
  firstAckAt: number | null = null;
  /** Operations that failed because the live tree changed under the agent (someone else wrote it). */
  readonly interference: string[] = [];
  files = new Map<string, string>();
  baseline: { files: ReadonlyMap<string, string>; seq: number; ts: number } = { files: new Map(), seq: 0, ts: 0 };
  log: AgentOp[] = [];
  #restores = 0;
  /** The turn end in flight, if any: an agent whose sandbox survived a fault still waits for it. */
  #pendingTurn: Promise<void> | null = null;
  #stopped = true;
  #wake: () => void = () => undefined;
  #loop: Promise<void> = Promise.resolve();

  constructor(
    readonly workspaceId: string,
    readonly rng: Rng,
    readonly turnEnd: TurnEnd,
  ) {}

  /** Newest completed operation (epoch ms), or the baseline's time. */
  get lastOpTs(): number {
    return this.log.at(-1)?.ts ?? this.baseline.ts;
  }

  /**
   * Starts writing into `root` (the live tree). `restored`: the tree came from the archive (the
   * state judged at `seq` / `ts`, durable); the log starts again from it. null: the live tree
   * survived (reused), so the log, the baseline and what was acknowledged go on: the archive
   * may still hold an older state than the live tree.
   */
  start(root: string, generation: number, restored: { files: ReadonlyMap<string, string>; seq: number; ts: number } | null): void {
    // The first incarnation starts from the seed, which the archive holds from now on: a fault
    // before any operation is reflected loses what was done since this moment, not since 1970.
    if (!restored && this.baseline.ts === 0) this.baseline = { ...this.baseline, ts: Date.now() };
    if (restored) {
      this.#restores += 1;
      this.baseline = { files: new Map(restored.files), seq: restored.seq, ts: restored.ts };
      this.files = new Map(restored.files);
      this.log = [];
      this.ackedSeq = restored.seq;
      this.#pendingTurn = null;
    }
    if (restored) {
      this.restoredAt = Date.now();
      this.firstAckAt = null;
    }
    this.#stopped = false;
    this.#loop = this.#run(root, generation);
  }

  /** Stops at once (the agent died with its pod, or its host is going away); resolves when no write is in flight. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#wake();
    await this.#loop;
  }

  // Waits `ms` unless stopped first.
  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.#wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  async #run(root: string, generation: number): Promise<void> {
    // Its turn was over when the fault stopped it: it writes again once that turn end is answered
    // (a restored tree's agent has no turn in flight: that answer would be about the lost tree).
    const pending = this.#pendingTurn;
    if (pending) await Promise.race([pending, new Promise<void>((resolve) => (this.#wake = resolve))]);
    if (this.#stopped) return;
    const dir = path.join(root, AGENT_DIR);
    for (let d = 0; d < DIRS; d++) await mkdir(path.join(dir, `d${d}`), { recursive: true });
    while (!this.#stopped) {
      const turnEndsAt = Date.now() + this.rng.int(2_000, 6_000);
      while (!this.#stopped && Date.now() < turnEndsAt) {
        try {
          await this.#tick(dir);
        } catch (error) {
          // The agent's own model of its tree no longer holds: something else changed the live tree.
          this.interference.push(`${this.workspaceId} at seq ${this.seq}: ${(error as Error).message}`);
          this.#stopped = true;
          return;
        }
        await this.#sleep(TICK_MS);
      }
      if (this.#stopped) break;
      this.turns += 1;
      const covered = this.seq;
      const restores = this.#restores;
      const acked: Promise<void> = this.turnEnd(generation, `t${this.turns}`).then(
        () => {
          // An ack that arrives after a restore replaced the tree says nothing about the new one.
          if (this.#restores !== restores) return;
          this.acks += 1;
          this.firstAckAt ??= Date.now();
          this.ackedSeq = Math.max(this.ackedSeq, covered);
        },
        () => {
          this.failedTurns += 1;
        },
      );
      this.#pendingTurn = acked;
      void acked.then(() => {
        if (this.#pendingTurn === acked) this.#pendingTurn = null;
      });
      await Promise.race([acked, new Promise<void>((resolve) => (this.#wake = resolve))]);
    }
  }

  // One tick: a new file, and sometimes a rewrite, a delete and a rename.
  async #tick(dir: string): Promise<void> {
    const content = (seq: number) => `seq=${seq} ts=${Date.now()} ${this.workspaceId} ${this.rng.bytes(this.rng.int(8, 200)).toString('hex')}\n`;
    const write = async (rel: string) => {
      const seq = ++this.seq;
      const text = content(seq);
      await writeFile(path.join(dir, rel), text);
      this.#done({ seq, ts: Date.now(), kind: 'write', path: rel, content: text });
    };
    await write(`d${this.rng.int(0, DIRS - 1)}/f-${this.seq + 1}.txt`);
    const existing = () => [...this.files.keys()];
    if (this.files.size > 1 && this.rng() < 0.3) await write(this.rng.pick(existing()));
    if (this.files.size > MAX_FILES || (this.files.size > 20 && this.rng() < 0.2)) {
      const victim = this.rng.pick(existing());
      const seq = ++this.seq;
      await rm(path.join(dir, victim));
      this.#done({ seq, ts: Date.now(), kind: 'delete', path: victim });
    }
    if (this.files.size > 1 && this.rng() < 0.15) {
      const from = this.rng.pick(existing());
      const seq = ++this.seq;
      const to = `d${this.rng.int(0, DIRS - 1)}/r-${seq}.txt`;
      await rename(path.join(dir, from), path.join(dir, to));
      this.#done({ seq, ts: Date.now(), kind: 'rename', path: from, to });
    }
  }

  #done(op: AgentOp): void {
    this.log.push(op);
    applyOp(this.files, op);
  }
}
