/**
 * Invariants checked from the outside once the faults stopped and the fleet settled.
 */
import type { Queue } from 'bullmq';
import { verifyTree } from '../src/archive/manifest.js';
import { StoreChecker } from '../src/archive/verify-store.js';
import type { FleetServices } from '../src/app/services.js';
import type { SandboxProvider } from '../src/providers/sandbox-provider.js';
import { fenceViolations } from './fence-violations.js';
import type { WorkspaceModel } from './workload.js';

export interface InvariantReport {
  lost: number;
  torn: number;
  fenceViolations: number;
  duplicateSandboxes: number;
  orphans: number;
  stuckJobs: number;
  untypedFailures: number;
  details: string[];
}

export async function checkInvariants(
  services: FleetServices,
  models: readonly WorkspaceModel[],
  providers: ReadonlyMap<string, SandboxProvider>,
  queues: readonly Queue[],
): Promise<InvariantReport> {
  const report: InvariantReport = { lost: 0, torn: 0, fenceViolations: 0, duplicateSandboxes: 0, orphans: 0, stuckJobs: 0, untypedFailures: 0, details: [] };
  const note = (line: string) => {
    if (report.details.length < 50) report.details.push(line);
  };

  for (const model of models) {
    const ws = model.workspaceId;
    const current = await services.archive.current(ws);
    const manifest = current ? await services.archive.readManifest(ws, current) : null;
    const record = current ? await services.archive.readRecord(ws, current) : null;
    // 0 torn: current is one complete revision: format 2, every tree and object there and hashing to its id; format 1, its tree matching its manifest.
    if (current && record) {
      const findings = await new StoreChecker(services.archive.objects, { readData: () => true }).check(record.root);
      if (findings.length > 0) {
        report.torn += 1;
        note(`${ws}: current ${current} has ${findings.length} damaged trees or objects (first: ${findings[0]!.path} ${findings[0]!.problem})`);
      }
    } else if (current && manifest) {
      const { mismatches } = await verifyTree(services.archive.paths(ws).revision(current), manifest);
      if (mismatches.length > 0) {
        report.torn += 1;
        note(`${ws}: current ${current} has ${mismatches.length} mismatches`);
      }
    }
    // 0 lost: every file an acknowledged persist promised is there, unless the agent deleted it later.
    const archived = new Map((manifest?.entries ?? []).filter((e) => e.t === 'f').map((e) => [e.p, e.h!]));
    for (const [file, hash] of model.acked) {
      if (model.deletedSinceAck.has(file)) continue;
      const got = archived.get(file);
      const acceptable = got === hash || (got !== undefined && (model.writtenSinceAck.get(file)?.has(got) ?? false));
      if (!acceptable) {
        report.lost += 1;
        note(`${ws}: acknowledged file ${file} ${got === undefined ? 'missing' : 'changed'} in ${current}`);
      }
    }
    for (const loss of model.restoreLosses) {
      report.lost += 1;
      note(`${ws}: acknowledged file ${loss}`);
    }
    // 0 fence violations: attached heads never go back in generation, and none is ahead of the address.
    for (const line of await fenceViolations(services, ws)) {
      report.fenceViolations += 1;
      note(line);
    }
  }

  // 1 live sandbox per workspace, 0 orphans (after the hosts' GC).
  const perWorkspace = new Map<string, number>();
  for (const provider of providers.values()) {
    for (const sandbox of await provider.list(AbortSignal.timeout(60_000))) {
      perWorkspace.set(sandbox.workspaceId, (perWorkspace.get(sandbox.workspaceId) ?? 0) + 1);
      const address = await services.addresses.get(sandbox.workspaceId);
      if (address?.handle !== sandbox.handle) {
        report.orphans += 1;
        note(`orphan sandbox ${sandbox.handle} (address ${address?.handle ?? 'none'})`);
      }
    }
  }
  for (const [ws, n] of perWorkspace) {
    if (n > 1) {
      report.duplicateSandboxes += 1;
      note(`${ws}: ${n} live sandboxes`);
    }
  }

  // Every job terminal, failures typed.
  for (const queue of queues) {
    const active = await queue.getJobCounts('active');
    report.stuckJobs += active.active ?? 0;
    for (const job of await queue.getFailed(0, 1_000)) {
      const reason = job.failedReason ?? '';
      if (!/^[A-Z][A-Za-z]+: /.test(reason) && !reason.startsWith('job stalled more than allowable limit')) {
        report.untypedFailures += 1;
        note(`${queue.name} job ${job.id} failed untyped: ${reason.slice(0, 120)}`);
      }
    }
  }
  return report;
}
