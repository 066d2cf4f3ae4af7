/**
 * One fault of the loss-window benchmark and its judgement from outside: the agents of the
 * workspaces on the faulted group stop at the fault time, the lag each workspace's metric claims
 * is read, the fault is injected, every affected workspace is provisioned again through the
 * fleet client (restored from the archive when its live tree died) and its tree is read from the
 * live directory and judged against the states its agent produced (loss-judge.ts).
 */
import { walkTree } from '../../src/archive/tree-walk.js';
import { lagMs } from '../../src/status/persist-lag.js';
import type { ProviderName } from '../../src/providers/sandbox-provider.js';
import type { ProvisionResult } from '../../src/queues/provision.js';
import { AGENT_DIR, readAgentFiles, type AgentSim } from './agent-sim.js';
import { judgeRestored } from './loss-judge.js';
import { keepForensics } from './loss-forensics.js';
import type { GroupId, ProcessFleet } from './process-fleet.js';

export type FaultKind = 'hostKill' | 'workerKill' | 'rollingRestart';

/** A workspace under test: its agent and where it lives now. */
export interface Tracked {
  readonly workspaceId: string;
  readonly provider: ProviderName;
  readonly agent: AgentSim;
  /** Files of the generated tree outside the agent's directory (they never change). */
  readonly baseFiles: number;
  result: ProvisionResult | null;
}

/** What one fault did to one workspace. */
export interface Observation {
  readonly provider: ProviderName;
  readonly kind: FaultKind;
  /** Fault time − the newest write present in the restored tree. */
  readonly lossMs: number;
  /** Fault time − completion of the oldest lost operation (0 when nothing was lost): the lag metric must claim at least this. */
  readonly lostSpanMs: number;
  /** What the lag metric claimed for the workspace at the fault. */
  readonly lagMs: number | null;
  /** The tree equals a state the agent produced. */
  readonly consistent: boolean;
  /** Files beyond that state which an upload-only checkpoint kept (0 when consistent). */
  readonly residue: number;
  /** Neither a state nor a state plus residue: a mix of two moments. */
  readonly torn: boolean;
  readonly ackedTurnLost: boolean;
  readonly lostOps: number;
  readonly lostBytes: number;
  /** The generated tree came back whole (counted only when the live tree died). */
  readonly baseIntact: boolean;
  readonly outcome: string;
  readonly detail: string | null;
  /**
   * The fault hit the workspace before it had recovered from the one before: it was restored
   * from the archive and no turn of its agent since had been acknowledged (nothing written since
   * the restore was durable yet). The loss window of such a fault also spans the time the workspace was down and being
   * restored, so it is reported apart from faults on a recovered workspace.
   */
  readonly compound: boolean;
  /** Its last restore → the first acknowledged turn after it (null when it was not restored, or none was acknowledged before this fault). */
  readonly recoveryMs: number | null;
}

/** What a fault found: the lag claimed, and whether the workspace had recovered from the fault before. */
export interface FaultAt {
  readonly kind: FaultKind;
  readonly at: number;
  readonly lagMs: number | null;
  readonly checkBase: boolean;
  readonly compound: boolean;
  readonly recoveryMs: number | null;
}

export const groupOf = (t: Tracked): GroupId => (t.provider === 'vercel' ? 'vercel' : (t.result!.hostId as GroupId));

// Files outside the agent's directory.
async function countBaseFiles(root: string): Promise<number> {
  let n = 0;
  for await (const entry of walkTree(root)) if (entry.type === 'file' && !entry.rel.toString('utf8').startsWith(`${AGENT_DIR}/`)) n += 1;
  return n;
}

/** Provisions `t` through the fleet client and starts (or restarts) its agent on the tree it got. */
export async function provisionAndJudge(fleet: ProcessFleet, t: Tracked, fault: FaultAt | null): Promise<Observation | null> {
  const { result } = await fleet.client.provision({ workspaceId: t.workspaceId, provider: t.provider }, { wait: true, timeoutMs: 30 * 60_000 });
  t.result = result as ProvisionResult;
  const root = await fleet.liveRoot(t.result);
  const restored = await readAgentFiles(root);
  const judged = judgeRestored(restored, t.agent.baseline, t.agent.log);
  const acked = t.agent.ackedSeq;
  if (process.env.LOSS_WINDOW_DEBUG) process.stderr.write(`[debug] ${t.workspaceId} ${t.result.outcome} ${t.result.handle} g${t.result.generation} judged ${judged.seq} consistent ${judged.consistent}\n`);
  // Counted before the agent writes again (a walk of a tree being written sees files vanish).
  const base = fault?.checkBase ? await countBaseFiles(root) : t.baseFiles;
  const forensics = process.env.LOSS_WINDOW_FORENSICS;
  if (forensics && (!judged.consistent || judged.seq < acked)) {
    const kept = await keepForensics(forensics, fleet.config, AGENT_DIR, {
      workspaceId: t.workspaceId,
      provision: t.result,
      ackedSeq: acked,
      judgedSeq: judged.seq,
      detail: judged.tornDiff ?? null,
      restoredFiles: [...restored.keys()].sort(),
      recentOps: t.agent.log.slice(-400).map((op) => ({ seq: op.seq, ts: op.ts, kind: op.kind, path: op.path, ...('to' in op ? { to: op.to } : {}) })),
    });
    process.stderr.write(`[loss-window] forensics of ${t.workspaceId} kept in ${kept}\n`);
  }
  // A reused (or resumed) sandbox kept its live tree: the agent's history goes on.
  const survived = t.result.outcome === 'reused' || t.result.outcome === 'resumed';
  t.agent.start(root, t.result.generation, survived ? null : { files: restored, seq: judged.seq, ts: judged.ts });
  if (!fault) return null;
  const detail = !judged.consistent
    ? judged.uploadOnlyResidue > 0
      ? `${t.workspaceId}: restored tree is the state after op ${judged.seq} plus ${judged.uploadOnlyResidue} files deleted or renamed before it (upload-only checkpoint)`
      : `${t.workspaceId}: restored tree (newest write ${judged.seq}${judged.foreign ? `, foreign content in ${judged.foreign}` : ''}) is no state the agent produced; ${judged.tornDiff}`
    : judged.seq < acked ? `${t.workspaceId}: restored seq ${judged.seq} < acknowledged ${acked}` : null;
  return {
    provider: t.provider,
    kind: fault.kind,
    lossMs: Math.max(0, fault.at - judged.ts),
    lostSpanMs: judged.oldestLostTs === null ? 0 : Math.max(0, fault.at - judged.oldestLostTs),
    lagMs: fault.lagMs,
    consistent: judged.consistent,
    residue: judged.uploadOnlyResidue,
    torn: !judged.consistent && judged.uploadOnlyResidue === 0,
    ackedTurnLost: judged.seq < acked,
    lostOps: judged.lostOps,
    lostBytes: judged.lostBytes,
    baseIntact: base === t.baseFiles,
    outcome: t.result.outcome,
    detail,
    compound: fault.compound,
    recoveryMs: fault.recoveryMs,
  };
}

// The lag the fleet's metric (fleet_persist_lag_max_seconds, `fleet status`) claims for a workspace at `now`.
async function claimedLagMs(fleet: ProcessFleet, workspaceId: string, now: number): Promise<number | null> {
  const [status, address] = await Promise.all([fleet.client.intents.status(workspaceId), fleet.client.addresses.get(workspaceId)]);
  return address ? lagMs(now, address.publishedAt, status) : null;
}

/**
 * Injects `kind` on `group` (a host kill loses the pod's disk and live trees; a Vercel "host"
 * kill also destroys its sandboxes; a worker kill SIGKILLs `victim` only; a rolling restart is
 * SIGTERM, then the disk is lost) and judges every workspace on the group.
 */
export async function injectAndJudge(fleet: ProcessFleet, kind: FaultKind, group: GroupId, victim: number, tracked: readonly Tracked[]): Promise<Observation[]> {
  const affected = tracked.filter((t) => groupOf(t) === group);
  // Read before the agents stop: had each workspace recovered from its last restart?
  const recovery = affected.map(({ agent }) => ({
    compound: agent.restoredAt !== null && agent.firstAckAt === null,
    ms: agent.restoredAt !== null && agent.firstAckAt !== null ? agent.firstAckAt - agent.restoredAt : null,
  }));
  await Promise.all(affected.map((t) => t.agent.stop()));
  const at = Date.now();
  const lags = await Promise.all(affected.map((t) => claimedLagMs(fleet, t.workspaceId, at)));
  if (kind === 'workerKill') {
    await fleet.group(group)[victim % fleet.group(group).length]!.restart();
  } else {
    const how = kind === 'hostKill' ? 'SIGKILL' : 'SIGTERM';
    if (group === 'vercel' && kind === 'hostKill') {
      await Promise.all(fleet.group(group).map((p) => p.kill('SIGKILL')));
      await Promise.all(affected.map((t) => fleet.provider('vercel').destroy(t.result!.handle, AbortSignal.timeout(60_000))));
    }
    await fleet.restartGroup(group, how, group !== 'vercel');
  }
  // Every agent of the group comes back at once, as after a real outage.
  const observations = await Promise.all(affected.map((t, i) => provisionAndJudge(fleet, t, { kind, at, lagMs: lags[i]!, checkBase: kind !== 'workerKill', compound: recovery[i]!.compound, recoveryMs: recovery[i]!.ms })));
  return observations.map((o) => o!);
}
