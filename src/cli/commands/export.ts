/**
 * `fleet export <ws> [--revision R] --to DIR | --tar FILE`: a revision (current by default) of
 * either format as a plain tree or a POSIX tar. Reads the archive only (`FLEET_ARCHIVE_ROOT`),
 * no Redis: an archive can be exported with the rest of the fleet down.
 */
import path from 'node:path';
import type { Command } from 'commander';
import { ArchiveStore } from '../../archive/archive-store.js';
import { UsageError } from '../../errors/usage-error.js';
import { exportSource } from '../../export/export-source.js';
import { exportToDirectory } from '../../export/export-to-directory.js';
import { exportToTar } from '../../export/export-to-tar.js';
import { RevisionId } from '../../queues/persist.js';
import { WorkspaceId, parsePayload } from '../../queues/index.js';
import type { CliContext } from '../context.js';
import { withInterrupt } from '../interrupt-signal.js';
import { printResult } from '../output.js';
import { progressBar } from '../progress-bar.js';

interface ExportFlags {
  revision?: string;
  to?: string;
  tar?: string;
  json?: boolean;
}

export function registerExport(program: Command, ctx: CliContext, run: (action: () => Promise<number>) => Promise<void>): void {
  program
    .command('export')
    .description('write a revision (current by default, either archive format) as a plain directory tree or a POSIX tar; reads only the archive')
    .argument('<workspace>', 'workspace id')
    .option('--revision <id>', 'revision id (see fleet history); default: the one current points at')
    .option('--to <dir>', 'a new directory (absent, or empty) to write the tree into')
    .option('--tar <file>', 'a new tar file (pax format) to write')
    .option('--json', 'print a summary as JSON')
    .action((workspace: string, opts: ExportFlags) =>
      run(async () => {
        const workspaceId = parsePayload('workspace', WorkspaceId, workspace);
        const revision = opts.revision === undefined ? undefined : parsePayload('--revision', RevisionId, opts.revision);
        if ((opts.to === undefined) === (opts.tar === undefined)) throw new UsageError('export: give exactly one of --to DIR or --tar FILE');
        const target = path.resolve(opts.to ?? opts.tar!);
        const config = ctx.config();
        const archive = new ArchiveStore(config.paths.archiveRoot);
        const started = Date.now();
        const source = await exportSource(archive, workspaceId, revision);
        const bar = opts.json ? null : progressBar(ctx.io, `export ${workspaceId}/${source.revision}`);
        // The host's tar that writes a format 2 tree gets the deadline of the restore that makes the same tree.
        const options = { systemPath: config.systemPath, timeoutMs: config.deadlines.persistMs, onProgress: (done: number, total: number) => bar?.update(done, total) };
        const made = await withInterrupt<{ files: number; bytes: number; tarFailure?: string }>((signal) =>
          opts.to !== undefined ? exportToDirectory(archive, source, target, { ...options, signal }) : exportToTar(archive, source, target, { ...options, signal }),
        );
        bar?.done();
        if (made.tarFailure !== undefined) ctx.io.stderr(`export: the host's tar failed (${made.tarFailure}); the tree was made file by file instead\n`);
        const summary = { workspaceId, revision: source.revision, format: source.format, [opts.to !== undefined ? 'to' : 'tar']: target, ...made, durationMs: Date.now() - started };
        printResult(ctx.io, Boolean(opts.json), summary, () => `${workspaceId}: revision ${source.revision} (format ${source.format}) exported to ${target}: ${made.files} files, ${made.bytes} bytes`);
        return 0;
      }),
    );
}
