/**
 * `loss-window` (G3, issue 18): how much work a fault really loses. The fleet runs as real
 * processes (bench/lib/process-fleet.ts: two local hosts with the Procfile's provision, persist
 * and checkpoint workers, and a pod serving the Vercel queues against the loopback stand-in); N
 * workspaces (20 by default, half on Vercel) each hold a generated tree (1,000 files by default;
 * `--files`) and an agent writing into the live tree (bench/lib/agent-sim.ts: a file every
 * 100 ms with a sequence number and a timestamp, rewrites, deletes, renames, a turn-end reconcile
 * persist every 2–6 s; checkpoints at the configured interval, 30 s by default).
 *
 * `--repeats` faults (default 100) at random moments from a seeded generator: a host kill
 * (SIGKILL of every process of a host with the loss of its disk and live trees; for Vercel the
 * pod's processes and its sandboxes) or a worker kill (SIGKILL of one process); then rolling
 * restarts (SIGTERM of every group in turn, then its disk is lost). After each fault the
 * affected workspaces are provisioned again through the fleet client and judged from outside
 * (bench/lib/loss-faults.ts): loss window, acknowledged turns lost, mixed trees, lag claimed.
 *
 * A fault that hits a workspace restored after the previous fault before any of its turns was
 * acknowledged again is a *compound* fault: its window also spans the outage and the restore,
 * so it is reported apart (what it loses is the work since the restore), and the loss targets
 * judge the host kills of recovered workspaces. `recovery` is the restore → first acknowledged
 * turn. `LOSS_WINDOW_AFTER_RECOVERY=1` waits for every workspace of a group to recover before
 * the next fault on it (then the random delay), so every fault is an independent one.
 */
import { AgentSim } from './lib/agent-sim.js';
import { withBenchEnv } from './lib/bench-env.js';
import { bySize, type SizeResult } from './lib/by-size.js';
import { groupOf, injectAndJudge, provisionAndJudge, type FaultKind, type Observation, type Tracked } from './lib/loss-faults.js';
import { startProcessFleet, type GroupId } from './lib/process-fleet.js';
import { target, type BenchContext, type BenchResult } from './lib/report.js';
import { scaled } from './lib/scale.js';
import { percentile, summarize, type Summary } from './lib/stats.js';
import { CONTENT_SEED, planTree, writeTree } from './lib/workspace-tree.js';
import { rng as createRng } from '../test/helpers/rng.js';

const DEFAULT_FAULTS = 100;
const SEED = 18;
/** Bytes per file of the generated tree on average (small: 100,000 files stay cheap to restore). */
const BYTES_PER_FILE = 1_024;

// Per provider: the percentiles of the loss window of host kills, and the counts that must be 0.
function providerFigures(obs: readonly Observation[]) {
  // Host kills of a recovered workspace (the targets), and those that came before it had recovered from the last one.
  const independent = obs.filter((o) => o.kind === 'hostKill' && !o.compound);
  const compound = obs.filter((o) => o.kind === 'hostKill' && o.compound);
  const kills = independent.map((o) => o.lossMs);
  const spans = independent.map((o) => o.lostSpanMs);
  const recoveries = obs.flatMap((o) => (o.recoveryMs === null ? [] : [o.recoveryMs]));
  const spread = (xs: readonly number[]) => ({ n: xs.length, p50: percentile(xs, 0.5), p99: percentile(xs, 0.99), max: xs.length ? Math.max(...xs) : Number.NaN });
  return {
    observations: obs.length,
    hostKill: spread(kills),
    // The work lost: fault − the oldest operation the restored tree lacks (the loss window also
    // counts time in which nothing was written).
    hostKillLostWork: { p50: percentile(spans, 0.5), p99: percentile(spans, 0.99), max: spans.length ? Math.max(...spans) : Number.NaN },
    // A kill before the workspace had recovered from the previous fault: its window spans the
    // outage and the restore too; what it loses is the work since that restore.
    compoundHostKill: { loss: spread(compound.map((o) => o.lossMs)), lostWork: spread(compound.map((o) => o.lostSpanMs)) },
    // Restore → the first acknowledged turn after it: how long a restored workspace goes without a
    // durable state newer than its restore (measured at the next fault, for workspaces that had recovered).
    recoveryMs: spread(recoveries),
    workerKillMaxMs: Math.max(0, ...obs.filter((o) => o.kind === 'workerKill').map((o) => o.lossMs)),
    rollingRestartLostBytes: obs.filter((o) => o.kind === 'rollingRestart').reduce((s, o) => s + o.lostBytes, 0),
    rollingRestartLostOps: obs.filter((o) => o.kind === 'rollingRestart').reduce((s, o) => s + o.lostOps, 0),
    ackedTurnsLost: obs.filter((o) => o.ackedTurnLost).length,
    tornTrees: obs.filter((o) => o.torn).length,
    uploadOnlyResidueTrees: obs.filter((o) => o.residue > 0).length,
    baseTreeDamaged: obs.filter((o) => !o.baseIntact).length,
    lagUnderLoss: obs.filter((o) => o.lagMs !== null && o.lagMs < o.lostSpanMs).length,
    outcomes: Object.fromEntries([...new Set(obs.map((o) => `${o.kind}:${o.outcome}`))].map((k) => [k, obs.filter((o) => `${o.kind}:${o.outcome}` === k).length])),
  };
}

/** The longest wait for a restored workspace's first acknowledged turn before the next fault is injected anyway. */
const RECOVERY_WAIT_MS = 15 * 60_000;

// Waits until every workspace of `affected` has an acknowledged turn since its last restore (or the cap).
async function recovered(affected: readonly Tracked[], ctx: BenchContext, label: string): Promise<void> {
  const deadline = Date.now() + RECOVERY_WAIT_MS;
  const pending = () => affected.filter((t) => t.agent.restoredAt !== null && t.agent.firstAckAt === null);
  while (pending().length > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 250));
  if (pending().length > 0) ctx.log(`${label}${pending().length} workspaces not recovered after ${RECOVERY_WAIT_MS} ms; injecting anyway`);
}

// LOSS_WINDOW_PROVIDERS (`local,vercel` by default): the providers workspaces alternate over.
function providersFromEnv(): ('local' | 'vercel')[] {
  const raw = process.env.LOSS_WINDOW_PROVIDERS ?? 'local,vercel';
  const list = raw.split(',');
  if (list.length === 0 || list.some((p) => p !== 'local' && p !== 'vercel')) throw new Error(`LOSS_WINDOW_PROVIDERS: expected local, vercel or both separated by a comma, got ${JSON.stringify(raw)}`);
  return list as ('local' | 'vercel')[];
}

async function measure(ctx: BenchContext, files: number, label: string): Promise<SizeResult & { violations: number }> {
  const providers = providersFromEnv();
  const afterRecovery = process.env.LOSS_WINDOW_AFTER_RECOVERY === '1';
  return withBenchEnv('loss-window', async (env) => {
    const faults = ctx.repeats ?? DEFAULT_FAULTS;
    const rolling = Math.max(1, Math.round(faults / 50));
    const workspaces = files > 10_000 ? scaled(2, providers.length) : scaled(20, 2);
    const rng = createRng(SEED + files);
    const fleet = await startProcessFleet(env, process.env.FLEET_ARCHIVE_FORMAT ? { FLEET_ARCHIVE_FORMAT: process.env.FLEET_ARCHIVE_FORMAT } : {});
    const persistMs: number[] = [];
    const turnEnd = (workspaceId: string) => async (generation: number, turnId: string) => {
      const started = performance.now();
      await fleet.client.persist({ workspaceId, generation, delete: true, reason: 'turn-end', turnId }, { wait: true, timeoutMs: 10 * 60_000 });
      persistMs.push(performance.now() - started);
    };
    const tracked: Tracked[] = Array.from({ length: workspaces }, (_, i) => {
      const workspaceId = `loss-${i}`;
      return { workspaceId, provider: providers[i % providers.length]!, agent: new AgentSim(workspaceId, createRng(SEED * 1_000 + i), turnEnd(workspaceId)), baseFiles: files, result: null };
    });
    // Released first (LIFO): no agent writes into a tree the cleanup removes.
    env.releasers.add('agents', () => Promise.all(tracked.map((t) => t.agent.stop())).then(() => undefined));
    ctx.log(`${label}${workspaces} workspaces of ${files} files; seeding`);
    const plan = planTree({ files, totalBytes: files * BYTES_PER_FILE });
    // Its own stream (the fault schedule's stays as it was): each workspace's tree is new bytes.
    const content = createRng(CONTENT_SEED + files);
    for (const t of tracked) {
      const result = (await fleet.client.provision({ workspaceId: t.workspaceId, provider: t.provider }, { wait: true, timeoutMs: 120_000 })).result!;
      await writeTree(await fleet.liveRoot(result), plan, content);
      await fleet.client.persist({ workspaceId: t.workspaceId, generation: result.generation, delete: true, reason: 'turn-end', turnId: 'seed' }, { wait: true, timeoutMs: 30 * 60_000 });
      await provisionAndJudge(fleet, t, null);
    }
    const observations: Observation[] = [];
    const injected: Record<FaultKind, number> = { hostKill: 0, workerKill: 0, rollingRestart: 0 };
    const run = async (kind: FaultKind, group: GroupId) => {
      if (process.env.LOSS_WINDOW_DEBUG) ctx.log(`${label}injecting ${kind} on ${group}`);
      const obs = await injectAndJudge(fleet, kind, group, rng.int(0, 99), tracked);
      injected[kind] += 1;
      observations.push(...obs);
      const worst = obs.reduce((m, o) => Math.max(m, o.lossMs), 0);
      ctx.log(`${label}${kind} ${group}: ${obs.length} workspaces, worst loss ${worst} ms, lost ops ${obs.reduce((s, o) => s + o.lostOps, 0)}, not yet recovered from the fault before ${obs.filter((o) => o.compound).length}${obs.some((o) => o.detail) ? ` (${obs.filter((o) => o.detail).map((o) => o.detail).join('; ')})` : ''}`);
    };
    // The first faults kill each group's host once (so a short run measures every provider's
    // host-kill loss); the rest are drawn at random.
    const groups = [...new Set(tracked.map(groupOf))];
    for (let i = 0; i < faults; i++) {
      const delay = rng.int(1_000, 10_000);
      const kind: FaultKind = i < groups.length || rng() < 0.7 ? 'hostKill' : 'workerKill';
      // Only groups that hold a workspace now (a restored local workspace may have moved host).
      const live = [...new Set(tracked.map(groupOf))];
      const group = i < groups.length && live.includes(groups[i]!) ? groups[i]! : rng.pick(live);
      // LOSS_WINDOW_AFTER_RECOVERY=1: every fault hits workspaces that have recovered from the last one.
      if (afterRecovery) await recovered(tracked.filter((t) => groupOf(t) === group), ctx, label);
      await new Promise((resolve) => setTimeout(resolve, delay));
      await run(kind, group);
    }
    for (let r = 0; r < rolling; r++) {
      for (const group of ['host-a', 'host-b', 'vercel'] as const) {
        if (!tracked.some((t) => groupOf(t) === group)) continue;
        await new Promise((resolve) => setTimeout(resolve, rng.int(1_000, 5_000)));
        await run('rollingRestart', group);
      }
    }
    await Promise.all(tracked.map((t) => t.agent.stop()));

    const persistMedian = percentile(persistMs, 0.5);
    const interval = fleet.config.checkpointIntervalMs;
    const byProvider = Object.fromEntries((['local', 'vercel'] as const).map((p) => [p, providerFigures(observations.filter((o) => o.provider === p))]));
    const metrics: Record<string, Summary> = { turn_end_persist_ms: summarize(persistMs, 'ms') };
    for (const p of ['local', 'vercel'] as const) {
      const of = (kind: FaultKind) => observations.filter((o) => o.provider === p && o.kind === kind);
      const independent = of('hostKill').filter((o) => !o.compound);
      const compound = of('hostKill').filter((o) => o.compound);
      metrics[`${p}:host_kill_loss_ms`] = summarize(independent.map((o) => o.lossMs), 'ms');
      metrics[`${p}:host_kill_lost_work_ms`] = summarize(independent.map((o) => o.lostSpanMs), 'ms');
      metrics[`${p}:host_kill_lag_claimed_ms`] = summarize(independent.map((o) => o.lagMs ?? Number.NaN), 'ms');
      metrics[`${p}:compound_host_kill_loss_ms`] = summarize(compound.map((o) => o.lossMs), 'ms');
      metrics[`${p}:compound_host_kill_lost_work_ms`] = summarize(compound.map((o) => o.lostSpanMs), 'ms');
      metrics[`${p}:recovery_ms`] = summarize(observations.filter((o) => o.provider === p && o.recoveryMs !== null).map((o) => o.recoveryMs!), 'ms');
      metrics[`${p}:worker_kill_loss_ms`] = summarize(of('workerKill').map((o) => o.lossMs), 'ms');
      metrics[`${p}:rolling_restart_lost_bytes`] = summarize(of('rollingRestart').map((o) => o.lostBytes), 'bytes');
    }
    const targets = (['local', 'vercel'] as const).flatMap((p) => {
      const f = byProvider[p]!;
      return [
        target(`${label}${p} host kill loss p99 (ms)`, f.hostKill.p99, '<=', interval),
        target(`${label}${p} host kill loss max (ms)`, f.hostKill.max, '<=', interval + persistMedian),
        target(`${label}${p} acknowledged turns lost`, f.ackedTurnsLost, '<=', 0),
        target(`${label}${p} torn trees (a mix of two moments)`, f.tornTrees, '<=', 0),
        target(`${label}${p} trees with upload-only checkpoint residue (no state the agent had)`, f.uploadOnlyResidueTrees, '<=', 0),
        target(`${label}${p} lag metric below measured loss`, f.lagUnderLoss, '<=', 0),
        target(`${label}${p} rolling restart bytes lost`, f.rollingRestartLostBytes, '<=', 0),
      ];
    });
    const interference = tracked.flatMap((t) => t.agent.interference);
    const violations = Object.values(byProvider).reduce((s, f) => s + f.ackedTurnsLost + f.tornTrees, 0) + interference.length;
    return {
      params: {
        files,
        workspaces,
        vercelWorkspaces: tracked.filter((t) => t.provider === 'vercel').length,
        archiveFormat: fleet.config.archiveFormat,
        checkpointIntervalMs: interval,
        shutdownFlushMs: fleet.config.shutdown.flushMs,
        seed: SEED + files,
        faults: injected,
        faultsAfterRecovery: afterRecovery,
        workerRestarts: fleet.processes.reduce((s, p) => s + p.restarts, 0),
        turns: tracked.reduce((s, t) => s + t.agent.turns, 0),
        acknowledgedTurns: tracked.reduce((s, t) => s + t.agent.acks, 0),
        failedTurns: tracked.reduce((s, t) => s + t.agent.failedTurns, 0),
        agentOps: tracked.reduce((s, t) => s + t.agent.seq, 0),
        persistMedianMs: persistMedian,
        lossWindow: byProvider,
        interference,
        details: observations.flatMap((o) => (o.detail ? [o.detail] : [])).slice(0, 20),
      },
      metrics,
      profile: {},
      targets,
      notes: [
        'loss window = fault time − completion time of the newest agent operation the restored tree reflects; n counts workspaces judged (one host kill judges every workspace on the host)',
        'host kill: SIGKILL of every process of the host and removal of its disk (live trees); Vercel: SIGKILL of the pod serving persist@vercel and checkpoint@vercel and destroy of its sandboxes',
        'the agent pauses writes while its turn-end reconcile runs (the turn is over); checkpoints run while it writes',
        'a restored tree is judged consistent (a state the agent had), upload-only residue (such a state plus files deleted or renamed before it: an upload-only checkpoint keeps files the live tree no longer has) or torn (neither); torn trees and acknowledged turns lost fail the run',
        'compound host kill: the workspace had not recovered from its previous fault (restored from the archive, and no turn of its agent acknowledged since), so its loss window also spans the outage and the restore; reported apart, the loss targets judge host kills of recovered workspaces; recovery = restore → first acknowledged turn',
        'lag check: the lag the metric claimed at the fault must cover the span of lost work (fault time − completion of the oldest lost operation); the loss window itself also counts the idle time before the last persist began',
      ],
      violations,
    };
  });
}

export default async function lossWindow(ctx: BenchContext): Promise<BenchResult> {
  let violations = 0;
  const result = await bySize(1_000, 100, { faults: ctx.repeats ?? DEFAULT_FAULTS }, async (files, label) => {
    const r = await measure(ctx, files, label);
    violations += r.violations;
    return r;
  });
  return { ...result, violations };
}
