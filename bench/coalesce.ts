/**
 * `coalesce`: a burst of 10,000 persist requests for 100 workspaces (100 turns each, round
 * robin, every turn rewriting the workspace's state file before its request) through the fleet
 * client, served by a real persist worker (`startFleetProcess`, the real persist processor) on
 * provisioned local workspaces with small trees.
 *
 * Measured per repeat: executions of the persist processor per workspace (target <= 3) and the
 * share of workspaces whose archived current revision equals the final live tree (target 100 %).
 *
 * Baseline, same run, same workspaces and worker concurrency: bare BullMQ with the common
 * "fixed jobId per workspace" dedup and the same persist protocol. It coalesces too, but drops a
 * request that arrives while its twin is running, so some final states are never archived.
 */
import { QUEUES } from '../src/queues/index.js';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Queue, Worker } from 'bullmq';
import { treeHashOf, scanTree } from '../src/archive/manifest.js';
import { createLogger } from '../src/logger.js';
import { persistWorkspace } from '../src/persist/persist-workspace.js';
import { createFleetClient } from '../src/producers/fleet-client.js';
import { PERSIST, queueNameFor } from '../src/queues/index.js';
import { startFleetProcess } from '../src/app/fleet-process.js';
import { persistProcessor } from '../src/workers/processors/persist.js';
import { persistProcessorDeps } from '../src/app/build-processors.js';
import type { Processor, Progress } from '../src/jobs/processor-context.js';
import { bareConnection } from './lib/bare-connection.js';
import { withBenchEnv } from './lib/bench-env.js';
import { startFleetHarness, type FleetHarness } from './lib/fleet-harness.js';
import { target, type BenchContext, type BenchResult } from './lib/report.js';
import { summarize } from './lib/stats.js';
import { scaled } from './lib/scale.js';

const WORKSPACES = scaled(100, 10);
const REQUESTS = WORKSPACES * 100;
const TURNS = REQUESTS / WORKSPACES;
const FILES_PER_WORKSPACE = 20;
const DRAIN_TIMEOUT_MS = 10 * 60_000;

const workspaceIds = Array.from({ length: WORKSPACES }, (_, i) => `ws-${String(i).padStart(3, '0')}`);

/** Phases of one persist execution, from its progress steps (ms). */
interface PersistPhases {
  readonly total: number;
  readonly prepare: number;
  readonly rsync: number;
  readonly scan: number;
  /** syncfs, manifest write and fsync, rename into place. */
  readonly commit: number;
  /** Record, attach (Redis), flip `current`. */
  readonly attach: number;
}

// Phase durations from step timestamps (NaN where a run ended early, e.g. unchanged).
function phaseOf(marks: Map<string, number>): PersistPhases {
  const at = (step: string) => marks.get(step) ?? Number.NaN;
  return {
    total: at('end') - at('start'),
    prepare: at('rsync') - at('start'),
    rsync: at('scan') - at('rsync'),
    scan: at('commit') - at('scan'),
    commit: at('attach') - at('commit'),
    attach: at('done') - at('attach'),
  };
}

interface BurstOutcome {
  readonly executions: number[];
  readonly archived: number;
  readonly burstMs: number;
  readonly drainMs: number;
}

// Writes a workspace's small tree (once) and its state file for a turn.
async function writeTurn(fleet: FleetHarness, workspaceId: string, label: string, turn: number): Promise<void> {
  const live = fleet.live(workspaceId);
  await writeFile(path.join(live, 'state.txt'), `${label} ${workspaceId} turn ${turn}\n`);
  await writeFile(path.join(live, 'src', `file-${turn % FILES_PER_WORKSPACE}.ts`), `export const turn = ${turn}; // ${label}\n`.repeat(50));
}

// True when the archived current revision has exactly the live tree's content.
async function archivedFinalState(fleet: FleetHarness, workspaceId: string): Promise<boolean> {
  const { archive } = fleet.services;
  const revision = await archive.current(workspaceId);
  const manifest = revision ? await archive.readManifest(workspaceId, revision) : null;
  if (!manifest) return false;
  return treeHashOf((await scanTree(fleet.live(workspaceId), null)).entries) === manifest.treeHash;
}

// Waits until `done()` holds, polling.
async function until(done: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + DRAIN_TIMEOUT_MS;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`coalesce bench: ${what} not reached within ${DRAIN_TIMEOUT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

// Sends the burst: one chain per workspace (write the turn, then request), all chains at once.
async function burst(fleet: FleetHarness, label: string, request: (workspaceId: string, turn: number) => Promise<void>): Promise<number> {
  const started = performance.now();
  await Promise.all(
    workspaceIds.map(async (workspaceId) => {
      for (let turn = 0; turn < TURNS; turn++) {
        await writeTurn(fleet, workspaceId, label, turn);
        await request(workspaceId, turn);
      }
    }),
  );
  return performance.now() - started;
}

export default async function coalesceBench(ctx: BenchContext): Promise<BenchResult> {
  const repeats = ctx.repeats ?? 3;
  return withBenchEnv('coalesce', async (env) => {
    const fleet = await startFleetHarness(env);
    const { config } = fleet;
    ctx.log(`provisioning ${WORKSPACES} workspaces (${FILES_PER_WORKSPACE} small files each)`);
    for (const workspaceId of workspaceIds) {
      await fleet.provision(workspaceId);
      await mkdir(path.join(fleet.live(workspaceId), 'src'), { recursive: true });
      for (let i = 0; i < FILES_PER_WORKSPACE; i++) await writeTurn(fleet, workspaceId, 'setup', i);
    }

    // The fleet: a real persist worker whose processor invocations are counted.
    const executions = new Map<string, number>();
    const phases: PersistPhases[] = [];
    const count = (workspaceId: string) => executions.set(workspaceId, (executions.get(workspaceId) ?? 0) + 1);
    let realPersist: Processor | undefined;
    const logger = createLogger({ level: 'silent' });
    const worker = await startFleetProcess({
      config,
      queues: ['persist'],
      logger,
      installSchedules: false,
      processors: {
        persist: (payload, jobCtx) => {
          count((payload as { workspaceId: string }).workspaceId);
          const marks = new Map<string, number>([['start', performance.now()]]);
          // The job's context with its progress observed (a proxy: the context's logger and signal are getters, which a spread would drop).
          const progress = async (update: Progress) => void marks.set(update.step, performance.now()).set('end', performance.now());
          const observed = new Proxy(jobCtx, { get: (target, key) => (key === 'progress' ? progress : Reflect.get(target, key, target)) });
          return realPersist!(payload, observed).finally(() => phases.push(phaseOf(marks)));
        },
      },
    });
    env.releasers.add('fleet worker', () => worker.close());
    realPersist = persistProcessor(persistProcessorDeps(worker.services)) as Processor;
    const client = createFleetClient({ config });
    env.releasers.add('fleet client', () => client.close());
    const fleetQueue = client.pool.queue(queueNameFor(PERSIST, config.hostId));

    // The baseline: bare BullMQ, fixed jobId per workspace, the same persist protocol.
    const bareExecutions = new Map<string, number>();
    const connection = bareConnection(env.redisUrl);
    const bareQueue = new Queue('bare-persist', { connection, prefix: '{bare}' });
    env.releasers.add('bare queue', () => bareQueue.close());
    const bareWorker = new Worker(
      'bare-persist',
      async (job) => {
        const workspaceId = job.data.workspaceId as string;
        bareExecutions.set(workspaceId, (bareExecutions.get(workspaceId) ?? 0) + 1);
        const address = await fleet.services.addresses.get(workspaceId);
        return persistWorkspace(fleet.persistDeps(), { workspaceId, generation: address!.generation, delete: true, force: false, reason: 'turn-end', turnId: null, coveredSeq: 0 }, fleet.ctx());
      },
      { connection, prefix: '{bare}', concurrency: config.worker.concurrency ?? QUEUES.persist.concurrency },
    );
    env.releasers.add('bare worker', () => bareWorker.close());

    const runFleet = async (repeat: number): Promise<BurstOutcome> => {
      executions.clear();
      const lastSeq = new Map<string, number>();
      const burstMs = await burst(fleet, `fleet-${repeat}`, async (workspaceId, turn) => {
        const address = await fleet.services.addresses.get(workspaceId);
        const { seq } = await client.persist({ workspaceId, generation: address!.generation, delete: turn % 10 === TURNS % 10 - 1 || turn === TURNS - 1, reason: 'turn-end' });
        lastSeq.set(workspaceId, seq);
      });
      const started = performance.now();
      await until(async () => {
        for (const workspaceId of workspaceIds) {
          const status = await client.intents.status(workspaceId);
          if (status.completedSeq < lastSeq.get(workspaceId)! && status.failedSeq < lastSeq.get(workspaceId)!) return false;
        }
        const counts = await fleetQueue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
        return Object.values(counts).every((c) => c === 0);
      }, 'fleet drain');
      const drainMs = performance.now() - started;
      let archived = 0;
      for (const workspaceId of workspaceIds) if (await archivedFinalState(fleet, workspaceId)) archived += 1;
      return { executions: workspaceIds.map((w) => executions.get(w) ?? 0), archived, burstMs, drainMs };
    };

    const runBare = async (repeat: number): Promise<BurstOutcome> => {
      bareExecutions.clear();
      const burstMs = await burst(fleet, `bare-${repeat}`, async (workspaceId) => {
        await bareQueue.add('persist', { workspaceId }, { jobId: `persist-${workspaceId}`, removeOnComplete: true, removeOnFail: true });
      });
      const started = performance.now();
      await until(async () => Object.values(await bareQueue.getJobCounts('waiting', 'active', 'delayed', 'prioritized')).every((c) => c === 0), 'bare drain');
      const drainMs = performance.now() - started;
      let archived = 0;
      for (const workspaceId of workspaceIds) if (await archivedFinalState(fleet, workspaceId)) archived += 1;
      return { executions: workspaceIds.map((w) => bareExecutions.get(w) ?? 0), archived, burstMs, drainMs };
    };

    const fleetRuns: BurstOutcome[] = [];
    const bareRuns: BurstOutcome[] = [];
    for (let repeat = 0; repeat < repeats; repeat++) {
      const order = repeat % 2 === 0 ? ([runFleet, runBare] as const) : ([runBare, runFleet] as const);
      for (const run of order) {
        const outcome = await run(repeat);
        (run === runFleet ? fleetRuns : bareRuns).push(outcome);
        const sorted = [...outcome.executions].sort((a, b) => a - b);
        ctx.log(
          `repeat ${repeat + 1} ${run === runFleet ? 'fleet' : 'bare jobId'}: burst ${outcome.burstMs.toFixed(0)} ms, drain ${outcome.drainMs.toFixed(0)} ms, ` +
            `executions/workspace median ${sorted[WORKSPACES / 2]} max ${sorted[WORKSPACES - 1]}, archived ${outcome.archived}/${WORKSPACES}`,
        );
      }
    }

    const perWorkspace = (runs: BurstOutcome[]) => runs.flatMap((r) => r.executions);
    const maxPerRun = (runs: BurstOutcome[]) => runs.map((r) => Math.max(...r.executions));
    const archivedPct = (runs: BurstOutcome[]) => runs.map((r) => (100 * r.archived) / WORKSPACES);
    const fleetMax = summarize(maxPerRun(fleetRuns), 'executions');
    const fleetArchived = summarize(archivedPct(fleetRuns), '%');
    const fleetTotal = fleetRuns.map((r) => r.executions.reduce((a, b) => a + b, 0));
    const phase = (key: keyof PersistPhases) => summarize(phases.map((p) => p[key]).filter((v) => Number.isFinite(v)), 'ms');
    return {
      params: { workspaces: WORKSPACES, requests: REQUESTS, turnsPerWorkspace: TURNS, filesPerWorkspace: FILES_PER_WORKSPACE, concurrency: config.worker.concurrency, repeats },
      metrics: {
        fleet_executions_per_workspace: summarize(perWorkspace(fleetRuns), 'executions'),
        fleet_max_executions_per_workspace: fleetMax,
        fleet_total_executions: summarize(fleetTotal, 'executions'),
        fleet_archived_final_state: fleetArchived,
        fleet_burst_ms: summarize(fleetRuns.map((r) => r.burstMs), 'ms'),
        fleet_drain_after_burst_ms: summarize(fleetRuns.map((r) => r.drainMs), 'ms'),
        bare_jobid_executions_per_workspace: summarize(perWorkspace(bareRuns), 'executions'),
        bare_jobid_max_executions_per_workspace: summarize(maxPerRun(bareRuns), 'executions'),
        bare_jobid_archived_final_state: summarize(archivedPct(bareRuns), '%'),
        bare_jobid_burst_ms: summarize(bareRuns.map((r) => r.burstMs), 'ms'),
        bare_jobid_drain_after_burst_ms: summarize(bareRuns.map((r) => r.drainMs), 'ms'),
      },
      profile: {
        'fleet persist execution total': phase('total'),
        'fleet persist prepare (fence, gate, head)': phase('prepare'),
        'fleet persist rsync': phase('rsync'),
        'fleet persist scan/hash': phase('scan'),
        'fleet persist commit (sync, manifest, rename)': phase('commit'),
        'fleet persist attach (redis, flip)': phase('attach'),
      },
      targets: [
        target('fleet executions per workspace (max over workspaces, worst repeat)', fleetMax.max, '<=', 3),
        target('fleet workspaces whose final state was archived (%, worst repeat)', fleetArchived.min, '>=', 100),
      ],
      notes: [`without coalescing every request would execute: ${TURNS} executions per workspace, ${REQUESTS} in total`],
    };
  });
}
