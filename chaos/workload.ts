/**
 * The workload: each workspace is driven by one agent doing turns: make sure the workspace is
 * provisioned (re-provisioning is part of every turn), write new files and delete an old one in
 * its live tree, then a turn-end reconcile persist. Workspaces live on the `local` provider (two
 * hosts) or on `vercel` (the loopback stand-in, through the real SDK). The model records, per
 * workspace, what an acknowledged persist promised: those files (with their hashes) must be in
 * the archive at the end unless the agent deleted them later.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { FleetClient } from '../src/producers/fleet-client.js';
import type { ProviderName, SandboxProvider } from '../src/providers/sandbox-provider.js';
import { walkTree } from '../src/archive/tree-walk.js';
import type { ProvisionResult } from '../src/queues/provision.js';
import type { Rng } from '../test/helpers/rng.js';

/** Messages kept per failure code. */
const FAILURE_SAMPLES = 3;

const sha = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

export interface WorkspaceModel {
  readonly workspaceId: string;
  /** The provider the agent provisions its workspace on. */
  readonly provider: ProviderName;
  generation: number;
  hostId: string | null;
  /** Files believed to be in the live tree: path → hash. */
  present: Map<string, string>;
  /** What the last acknowledged persist promised: path → hash. */
  acked: Map<string, string>;
  /** Hashes written to a path since the last ack (also acceptable in the archive). */
  writtenSinceAck: Map<string, Set<string>>;
  /** Paths the agent deleted since the last ack (no longer required). */
  deletedSinceAck: Set<string>;
  turns: number;
  acks: number;
  /** Acknowledged files a re-provisioned live tree came back without (each one is a loss). */
  restoreLosses: string[];
}

export interface WorkloadContext {
  readonly client: FleetClient;
  /** The provider of each host id (`host-a`, `host-b`: local; `vercel`: the stand-in). */
  readonly providers: ReadonlyMap<string, SandboxProvider>;
  readonly rng: Rng;
  readonly counters: {
    turns: number;
    acked: number;
    failedTurns: number;
    failures: Record<string, number>;
    /** The first messages of each failure code (what a typed failure said, for the run's report). */
    failureSamples: Record<string, string[]>;
    ackedByProvider: Record<string, number>;
  };
}

// Reads a live tree's files (path → hash) after a rebuild, through the provider's tree export.
async function readLive(provider: SandboxProvider, handle: string): Promise<Map<string, string>> {
  const tree = await provider.openTree(handle, AbortSignal.timeout(30_000));
  try {
    const files = new Map<string, string>();
    for await (const entry of walkTree(tree.path)) {
      if (entry.type === 'file') files.set(entry.rel.toString('utf8'), sha(await readFile(path.join(tree.path, entry.rel.toString('utf8')))));
    }
    return files;
  } finally {
    await tree.release();
  }
}

export function newModel(workspaceId: string, provider: ProviderName = 'local'): WorkspaceModel {
  return { workspaceId, provider, generation: 0, hostId: null, present: new Map(), acked: new Map(), writtenSinceAck: new Map(), deletedSinceAck: new Set(), turns: 0, acks: 0, restoreLosses: [] };
}

/** One turn of one agent. Never throws: a failed step just means the turn is not acknowledged. */
export async function runTurn(ctx: WorkloadContext, model: WorkspaceModel): Promise<void> {
  const { client, rng } = ctx;
  model.turns += 1;
  ctx.counters.turns += 1;
  try {
    const { result } = await client.provision({ workspaceId: model.workspaceId, provider: model.provider }, { wait: true, timeoutMs: 30_000 });
    const r = result as ProvisionResult;
    const provider = ctx.providers.get(r.hostId)!;
    if (r.generation !== model.generation || r.hostId !== model.hostId) {
      model.generation = r.generation;
      model.hostId = r.hostId;
      model.present = await readLive(provider, r.handle);
      // A restore (or a resumed sandbox) must give back every file the last ack promised.
      for (const [file, hash] of model.acked) {
        if (model.deletedSinceAck.has(file)) continue;
        const got = model.present.get(file);
        if (got === hash || (got !== undefined && (model.writtenSinceAck.get(file)?.has(got) ?? false))) continue;
        model.restoreLosses.push(`${file} ${got === undefined ? 'missing' : 'changed'} after re-provision to ${r.hostId} generation ${r.generation}`);
      }
    }
    const files = Array.from({ length: rng.int(1, 3) }, (_, k) => {
      const rel = `t${model.turns}/f${k}-${rng.bytes(3).toString('hex')}.txt`;
      return { path: rel, content: Buffer.from(`${model.workspaceId} turn ${model.turns} file ${k} ${rng.bytes(8).toString('hex')}\n`) };
    });
    await provider.writeFiles(r.handle, files, AbortSignal.timeout(10_000));
    for (const f of files) {
      const hash = sha(f.content);
      model.present.set(f.path, hash);
      const set = model.writtenSinceAck.get(f.path) ?? new Set<string>();
      set.add(hash);
      model.writtenSinceAck.set(f.path, set);
    }
    if (model.present.size > 6 && rng() < 0.5) {
      const victim = rng.pick([...model.present.keys()]);
      // A failed call does not say whether the command ran (a dropped connection after the
      // sandbox started it): the file may be gone, so no later ack may require it.
      const rm = await provider.exec(r.handle, { cmd: ['rm', '-f', '--', victim], timeoutMs: 10_000, signal: AbortSignal.timeout(15_000) }).catch((error: unknown) => {
        model.present.delete(victim);
        model.deletedSinceAck.add(victim);
        throw error;
      });
      if (rm.exitCode === 0) {
        model.present.delete(victim);
        model.deletedSinceAck.add(victim);
      }
    }
    const snapshot = new Map(model.present);
    await client.persist({ workspaceId: model.workspaceId, generation: r.generation, delete: true, reason: 'turn-end', turnId: `t${model.turns}` }, { wait: true, timeoutMs: 30_000 });
    model.acked = snapshot;
    model.writtenSinceAck = new Map();
    model.deletedSinceAck = new Set();
    model.acks += 1;
    ctx.counters.acked += 1;
    ctx.counters.ackedByProvider[model.provider] = (ctx.counters.ackedByProvider[model.provider] ?? 0) + 1;
  } catch (error) {
    ctx.counters.failedTurns += 1;
    const code = (error as { code?: unknown }).code;
    const key = typeof code === 'string' ? code : (error as Error).name;
    ctx.counters.failures[key] = (ctx.counters.failures[key] ?? 0) + 1;
    const samples = (ctx.counters.failureSamples[key] ??= []);
    if (samples.length < FAILURE_SAMPLES) samples.push(`${model.workspaceId} turn ${model.turns}: ${String((error as Error).message ?? error).slice(0, 300)}`);
  }
}
