// One host for hostops tests: a real LocalProvider over temporary roots nested in a fleet home
// (so an escape lands somewhere the test looks), a sentinel directory outside the home, one live
// sandbox `ws`, a base snapshot, a committed revision of `ws` and one of `victim`, and the real
// hostops processor wired to the provider. `trees()` snapshots everything an attack could reach.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { archivePaths } from '../../src/archive/archive-paths.js';
import { loadConfig, type Config } from '../../src/config.js';
import { LocalProvider } from '../../src/providers/local/local-provider.js';
import { livePaths } from '../../src/providers/local/live-paths.js';
import { hostOpsProcessor } from '../../src/workers/processors/hostops.js';
import type { ProcessorContext } from '../../src/jobs/processor-context.js';
import { silentLogger } from './fleet-harness.js';
import { tempDir, testEnv } from './fleet-env.js';
import { readTree } from './tree.js';

export const WS_REVISION = 'r20261130T101530123Z-g1-aaaaaa';
export const VICTIM_REVISION = 'r20261130T101530123Z-g1-vvvvvv';
export const BASE = 'base-1';

export interface HostopsHost {
  readonly config: Config;
  readonly home: string;
  readonly sentinel: string;
  readonly local: LocalProvider;
  /** Handle of the live sandbox `ws` (generation 1). */
  readonly handle: string;
  /** Runs one job payload through the real hostops processor. */
  run(payload: unknown): Promise<unknown>;
  /** The fleet home and the sentinel directory, file by file. */
  trees(): Promise<{ home: Record<string, string>; sentinel: Record<string, string> }>;
  /** The live tree of `ws`. */
  liveTree(): Promise<Record<string, string>>;
}

// A committed revision: the directory with its files and a manifest beside it.
async function commitRevision(archiveRoot: string, workspaceId: string, revision: string, files: Record<string, string>): Promise<void> {
  const paths = archivePaths(archiveRoot, workspaceId);
  await mkdir(paths.revision(revision), { recursive: true });
  for (const [rel, content] of Object.entries(files)) await writeFile(path.join(paths.revision(revision), rel), content);
  await writeFile(paths.manifest(revision), JSON.stringify({ revision, workspaceId, generation: 1 }));
}

// A tree, or a marker when the whole directory is gone (what a `rm -rf {root}/..` leaves).
async function treeOrMissing(root: string): Promise<Record<string, string>> {
  return readTree(root).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return { '(the directory itself)': 'missing' };
    throw error;
  });
}

/** A processor context with a deadline far away. */
export function hostopsCtx(): ProcessorContext {
  return { logger: silentLogger(), signal: AbortSignal.timeout(60_000), queue: 'hostops@local', jobId: 'fuzz', attempt: 1, maxAttempts: 1, deadlineAt: Date.now() + 60_000, progress: async () => undefined };
}

export async function hostopsHost(): Promise<HostopsHost> {
  const env = await testEnv();
  const home = env.FLEET_HOME!;
  // The live root sits two levels down, so `../../x` from it still lands inside the home.
  const config = loadConfig({ ...env, FLEET_LIVE_ROOT: path.join(home, 'hosts', 'local', 'live') });
  const { liveRoot, archiveRoot, snapshotRoot } = config.paths;
  const sentinel = await tempDir('hostops-sentinel');
  await mkdir(path.join(sentinel, 'dir'), { recursive: true });
  await writeFile(path.join(sentinel, 'secret.txt'), 'host secret');
  await writeFile(path.join(sentinel, 'dir', 'x'), 'x');
  await mkdir(path.join(home, 'redis'), { recursive: true });
  await writeFile(path.join(home, 'redis', 'appendonly.aof'), 'fleet state');

  const local = new LocalProvider({ hostId: config.hostId, liveRoot, snapshotRoot, archiveRoot, systemPath: config.systemPath, copyTimeoutMs: 30_000 });
  const { handle } = await local.create({ workspaceId: 'ws', generation: 1, source: { type: 'empty' }, signal: AbortSignal.timeout(30_000) });
  await writeFile(path.join(livePaths(liveRoot, 'ws').root, 'notes.txt'), 'mine');
  await mkdir(path.join(snapshotRoot, BASE, 'tree'), { recursive: true });
  await writeFile(path.join(snapshotRoot, BASE, 'tree', 'base.txt'), 'base');
  await commitRevision(archiveRoot, 'ws', WS_REVISION, { 'restored.txt': 'from the archive' });
  await commitRevision(archiveRoot, 'victim', VICTIM_REVISION, { 'victim.txt': 'private' });

  const processor = hostOpsProcessor({ local, hostId: config.hostId, archiveRoot });
  return {
    config,
    home,
    sentinel,
    local,
    handle,
    run: (payload) => processor(payload, hostopsCtx()),
    trees: async () => ({ home: await treeOrMissing(home), sentinel: await treeOrMissing(sentinel) }),
    liveTree: () => readTree(livePaths(liveRoot, 'ws').root),
  };
}

/** Resolves with what `promise` rejected with (throws if it resolved). */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(`expected a refusal, but the call succeeded with ${JSON.stringify(value)}`);
    },
    (error: unknown) => error,
  );
}
