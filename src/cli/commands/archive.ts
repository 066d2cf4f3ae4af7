/**
 * `fleet archive migrate [--workspace W]... [--dry-run] [--remove-format1]`: format 1 revisions
 * become format 2 records under the same ids (verified against their manifests, resumable, under
 * each workspace's persist and provision locks). One line per revision on stdout as it is done,
 * progress on stderr, exit 1 when any revision was not migrated (named on stderr).
 */
import type { Command } from 'commander';
import { ArchiveStore } from '../../archive/archive-store.js';
import { MigrationMismatchError } from '../../errors/migration-mismatch-error.js';
import { UsageError } from '../../errors/usage-error.js';
import { LockUnavailableError } from '../../locks/lock-errors.js';
import { migrateArchive, type MigrationReport, type PlannedReport } from '../../migrate/migrate-archive.js';
import { WorkspaceId, parsePayload } from '../../queues/index.js';
import type { CliContext } from '../context.js';
import { withInterrupt } from '../interrupt-signal.js';
import { errorLine, printResult } from '../output.js';
import { parseMs } from '../parse.js';
import { progressBar } from '../progress-bar.js';
import { withServices } from '../../app/with-services.js';

interface MigrateFlags {
  workspace: string[];
  dryRun?: boolean;
  removeFormat1?: boolean;
  lockWait?: string;
  json?: boolean;
}

// One line per revision (what a run did or a dry run would do).
function revisionLine(r: PlannedReport): string {
  const head = `${r.workspaceId} ${r.revision}:`;
  switch (r.outcome) {
    case 'converted':
    case 'already-converted': {
      const done = [r.currentFlipped ? 'current now names its record' : '', r.removedFormat1 ? 'format 1 copy removed' : ''].filter(Boolean).join(', ');
      const counts = r.outcome === 'converted' ? ` (${r.files} files, ${r.readFiles} read, ${r.newObjects} new objects, ${r.storedBytes} bytes stored)` : '';
      return `${head} ${r.outcome}${counts}${done ? `; ${done}` : ''}`;
    }
    case 'mismatch':
      return `${head} MISMATCH ${r.detail}: ${r.mismatches!.map((m) => `${m.problem}:${JSON.stringify(m.path)}`).join(' ')}`;
    case 'would-convert':
      return `${head} would convert ${r.files} files, ${r.bytes} bytes`;
    default:
      return `${head} ${r.outcome}${r.detail ? ` (${r.detail})` : ''}`;
  }
}

function summaryLine(report: MigrationReport): string {
  if (report.dryRun) return `dry run: ${report.revisions.filter((r) => r.outcome === 'would-convert').length} revision(s) to convert, ${report.revisions.filter((r) => r.outcome === 'would-finish').length} to finish, in ${report.workspaces} workspace(s); nothing written`;
  return `${report.converted} revision(s) converted, ${report.alreadyConverted} already converted, ${report.failed} not migrated, in ${report.workspaces} workspace(s): ${report.files} files (${report.readFiles} read, ${report.newObjects} new objects, ${report.storedBytes} bytes stored) in ${report.durationMs} ms (${report.filesPerSecond} files/s); ${report.currentFlipped} current pointer(s) flipped, ${report.removedFormat1} format 1 copies removed`;
}

// The one-line errors naming what was not migrated.
function failureLines(report: MigrationReport): string[] {
  const named = (outcomes: string[]) => report.revisions.filter((r) => outcomes.includes(r.outcome)).map((r) => `${r.workspaceId}/${r.revision}`);
  const bad = named(['mismatch', 'manifest-invalid']);
  const busy = named(['deferred']);
  return [
    ...(bad.length > 0 ? [errorLine(new MigrationMismatchError(`${bad.length} revision(s) left in format 1 (they do not match their manifests): ${bad.join(' ')}`))] : []),
    ...(busy.length > 0 ? [errorLine(new LockUnavailableError(`${busy.length} revision(s) deferred (their workspace's lock stayed held; run again): ${busy.join(' ')}`))] : []),
  ];
}

export function registerArchive(program: Command, ctx: CliContext, run: (action: () => Promise<number>) => Promise<void>): void {
  const archive = program.command('archive').description('archive maintenance');
  archive
    .command('migrate')
    .description('convert format 1 revisions (hard-linked trees + manifests) into format 2 records under the same ids: verified, resumable, with progress')
    .option('--workspace <id>', 'only this workspace (repeatable; default: every workspace in the archive)', (value: string, all: string[]) => [...all, value], [])
    .option('--dry-run', 'report what would be converted, write nothing')
    .option('--remove-format1', "remove each verified revision's directory and manifest once its record is durable")
    .option('--lock-wait <ms>', "how long to wait for a workspace's persist or provision lock (default: the persist deadline)")
    .option('--json', 'print the report as JSON')
    .action((opts: MigrateFlags) =>
      run(async () => {
        const workspaces = opts.workspace.map((id) => parsePayload('--workspace', WorkspaceId, id));
        const config = ctx.config();
        const lockWaitMs = parseMs('--lock-wait', opts.lockWait, config.deadlines.persistMs);
        // Format 1 persists build each revision from the current one's directory: it must stay while they run.
        if (opts.removeFormat1 && config.archiveFormat !== 2) throw new UsageError('--remove-format1: the fleet writes format 1 (FLEET_ARCHIVE_FORMAT=1), whose persists read the current revision\'s directory; switch to format 2 first');
        const known = new Set(await new ArchiveStore(config.paths.archiveRoot).workspaces());
        for (const id of workspaces) if (!known.has(id)) throw new UsageError(`--workspace: no workspace ${JSON.stringify(id)} in the archive (${config.paths.archiveRoot})`);
        return withServices(ctx, ['archive', 'singleFlight'], (services, connected) =>
          withInterrupt(async (signal) => {
            const bar = opts.json ? null : progressBar(ctx.io, 'migrate');
            const report = await migrateArchive(
              { archive: services.archive, locks: services.singleFlight, systemPath: connected.systemPath, lockHoldMs: connected.deadlines.persistMs, lockWaitMs },
              {
                ...(workspaces.length > 0 ? { workspaces } : {}),
                dryRun: Boolean(opts.dryRun),
                removeFormat1: Boolean(opts.removeFormat1),
                signal,
                onFile: (workspaceId, revision, files, total) => bar?.update(files, total, `${workspaceId} ${revision}`),
                onWait: (resource) => ctx.io.stderr(`waiting for lock ${resource} (held by a persist, rollback, provisioning or backfill)\n`),
                onRevision: (r) => {
                  if (!opts.json) ctx.io.stdout(`${revisionLine(r)}\n`);
                },
              },
            );
            bar?.done();
            printResult(ctx.io, Boolean(opts.json), report, () => summaryLine(report));
            for (const line of failureLines(report)) ctx.io.stderr(`${line}\n`);
            return report.failed > 0 ? 1 : 0;
          }),
        );
      }),
    );
}
