/**
 * `fleet files get|put|rm|ls <ws> <path>`: a workspace's files through the same resolver as the
 * HTTP API (warm from the live sandbox, cold from the archive; a cold write is a new revision).
 */
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { WorkspaceId, RevisionId, parsePayload } from '../../queues/index.js';
import { UsageError } from '../../errors/usage-error.js';
import type { CliContext } from '../context.js';
import { printResult, table } from '../output.js';
import { withServices } from '../../app/with-services.js';
import { buildWorkspaceIo, WORKSPACE_IO_SERVICES } from '../../app/build-workspace-io.js';
import type { IoSource, WorkspaceIo } from '../../workspace-io/workspace-io.js';

type Run = (action: () => Promise<number>) => Promise<void>;

const sourceText = (source: IoSource) => (source.kind === 'live' ? `live g${source.generation}` : `archive ${source.revision ?? '(none)'}`);
const DEADLINE_MS = 120_000;

// Runs `fn` with the resolver of a fresh set of services.
function withIo(ctx: CliContext, fn: (io: WorkspaceIo) => Promise<number>): Promise<number> {
  return withServices(ctx, WORKSPACE_IO_SERVICES, async (services) => fn(buildWorkspaceIo(services)));
}

const revisionOf = (value: string | undefined) => (value === undefined ? {} : { revision: parsePayload('--revision', RevisionId, value) });

export function registerFiles(program: Command, ctx: CliContext, run: Run): void {
  const files = program.command('files').description("read and write a workspace's files (live sandbox, else the archive)");
  files
    .command('get')
    .description('print a file (raw bytes) to stdout')
    .argument('<workspace>', 'workspace id')
    .argument('<path>', 'path relative to the tree root')
    .option('--revision <id>', 'read a kept revision')
    .action((workspace: string, file: string, opts: { revision?: string }) =>
      run(async () => {
        const workspaceId = parsePayload('workspace', WorkspaceId, workspace);
        return withIo(ctx, async (io) => {
          const read = await io.read({ workspaceId, path: file, ...revisionOf(opts.revision), signal: AbortSignal.timeout(DEADLINE_MS) });
          process.stdout.write(read.content);
          return 0;
        });
      }),
    );
  files
    .command('put')
    .description('write a file atomically, from --from <local file> or --content <text>')
    .argument('<workspace>', 'workspace id')
    .argument('<path>', 'path relative to the tree root')
    .option('--from <file>', 'local file to upload')
    .option('--content <text>', 'the content as text')
    .option('--mode <octal>', 'permission bits, e.g. 644')
    .option('--json', 'print { workspaceId, path, bytes, source } as JSON')
    .action((workspace: string, file: string, opts: { from?: string; content?: string; mode?: string; json?: boolean }) =>
      run(async () => {
        const workspaceId = parsePayload('workspace', WorkspaceId, workspace);
        if ((opts.from === undefined) === (opts.content === undefined)) throw new UsageError('files put: give exactly one of --from <file> or --content <text>');
        if (opts.mode !== undefined && !/^0?[0-7]{3,4}$/.test(opts.mode)) throw new UsageError(`files put: --mode must be octal permission bits like 644, got ${JSON.stringify(opts.mode)}`);
        const content = opts.from !== undefined ? await readFile(opts.from) : Buffer.from(opts.content!);
        return withIo(ctx, async (io) => {
          const written = await io.write({ workspaceId, path: file, content, ...(opts.mode ? { mode: Number.parseInt(opts.mode, 8) } : {}), signal: AbortSignal.timeout(DEADLINE_MS) });
          printResult(ctx.io, Boolean(opts.json), { workspaceId, path: file, bytes: written.bytes, source: written.source }, () => `${workspaceId}: wrote ${file} (${written.bytes} bytes, ${sourceText(written.source)})`);
          return 0;
        });
      }),
    );
  files
    .command('rm')
    .description('remove a file, a symlink or a directory with everything below it')
    .argument('<workspace>', 'workspace id')
    .argument('<path>', 'path relative to the tree root')
    .option('--json', 'print { workspaceId, path, removed, source } as JSON')
    .action((workspace: string, file: string, opts: { json?: boolean }) =>
      run(async () => {
        const workspaceId = parsePayload('workspace', WorkspaceId, workspace);
        return withIo(ctx, async (io) => {
          const removed = await io.remove({ workspaceId, path: file, signal: AbortSignal.timeout(DEADLINE_MS) });
          printResult(ctx.io, Boolean(opts.json), { workspaceId, path: file, ...removed }, () => `${workspaceId}: ${removed.removed ? 'removed' : 'nothing at'} ${file} (${sourceText(removed.source)})`);
          return removed.removed ? 0 : 1;
        });
      }),
    );
  files
    .command('ls')
    .description('list a directory (default: the root)')
    .argument('<workspace>', 'workspace id')
    .argument('[path]', 'directory relative to the tree root', '')
    .option('--revision <id>', 'list a kept revision')
    .option('--json', 'print { workspaceId, path, source, entries } as JSON')
    .action((workspace: string, dir: string, opts: { revision?: string; json?: boolean }) =>
      run(async () => {
        const workspaceId = parsePayload('workspace', WorkspaceId, workspace);
        return withIo(ctx, async (io) => {
          const listed = await io.list({ workspaceId, path: dir, ...revisionOf(opts.revision), signal: AbortSignal.timeout(DEADLINE_MS) });
          printResult(ctx.io, Boolean(opts.json), { workspaceId, path: dir, source: listed.source, entries: listed.entries }, () =>
            `${sourceText(listed.source)}\n${table(['type', 'mode', 'size', 'mtime', 'path'], listed.entries.map((e) => [e.type, e.mode.toString(8), e.size, e.mtime, e.target ? `${e.path} -> ${e.target}` : e.path]))}`,
          );
          return 0;
        });
      }),
    );
}
