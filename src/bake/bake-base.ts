/**
 * Baking a base snapshot (G6, G8), under the `bake:{manifestHash}` lock:
 *   reuse a ready snapshot of the same hash (one the provider still has), else
 *   seed sandbox → template files → packages → setup (allowlisted env only) → marker, read back →
 *   smoke checks → snapshot, refused when the provider gives it an expiry → register `candidate`
 *   → a fresh sandbox made from the snapshot: marker read back, the base's files archived
 *   (bake/archive-base.ts), smoke checks → `ready` → optionally activate.
 * Progress is reported at every step. A failing setup, marker or smoke check registers the bake as
 * `failed` (never activatable) and destroys its sandboxes; a candidate that fails its test is
 * recorded failed and its snapshot deleted.
 */
import { commandFailure } from '../lib/command-failure.js';
import { randomBytes } from 'node:crypto';
import { BakeFailedError } from '../errors/bake-failed-error.js';
import type { BakePayload } from '../queues/bake.js';
import type { SandboxProvider } from '../providers/sandbox-provider.js';
import type { Config } from '../config.js';
import type { SingleFlight } from '../locks/single-flight.js';
import type { Logger } from '../logger.js';
import type { ProviderRegistry } from '../providers/provider-registry.js';
import type { PendingCreateStore } from '../state/pending-create-store.js';
import type { BaseRegistry } from '../state/base-registry.js';
import { withSignal, type ProcessorContext } from '../jobs/processor-context.js';
import { manifestHash, manifestVersion } from '../queues/manifest-hash.js';
import { overlayBytes, type BaseManifest } from '../queues/base-manifest.js';
import { anySignal } from '../lib/any-signal.js';

/** What a base's files are archived from: its snapshot, and a sandbox fresh from it if there is one. */
export interface BaseSource {
  readonly provider: string;
  readonly snapshotId: string;
  readonly handle: string | null;
}

export interface BakeResult {
  readonly snapshotId: string;
  readonly version: string;
  readonly manifestHash: string;
  readonly provider: string;
  readonly lane: string;
  readonly reused: boolean;
  readonly activated: boolean;
  readonly durationMs: number;
}

/** The environment of setup commands: the manifest's own env plus allowlisted names, nothing else. */
export function setupEnv(manifest: BaseManifest, source: Readonly<Record<string, string>>): Record<string, string> {
  const env: Record<string, string> = { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', HOME: '/tmp', LANG: 'C.UTF-8' };
  for (const name of manifest.envAllowlist) if (source[name] !== undefined) env[name] = source[name]!;
  return { ...env, ...manifest.env };
}

// Runs one command in the seed sandbox; a non-zero exit fails the bake with its output.
async function runStep(provider: SandboxProvider, handle: string, step: string, command: string, env: Record<string, string>, ctx: ProcessorContext): Promise<void> {
  const timeoutMs = Math.max(1_000, Math.min(15 * 60_000, ctx.deadlineAt - Date.now()));
  const result = await provider.exec(handle, { cmd: ['sh', '-c', command], env, timeoutMs, signal: ctx.signal });
  const failure = commandFailure(step, command, result);
  if (failure !== null) throw new BakeFailedError(failure, { context: { step, command, exitCode: result.exitCode } });
}

/** What a base's marker file says (`manifest.marker` in the tree, read back in every test). */
export interface BaseMarker {
  readonly kind: 'base';
  readonly name: string;
  readonly version: string;
  readonly manifestHash: string;
  readonly lane: string;
  readonly runtime: string;
  readonly bakedAt: string;
}

// Reads the marker back from a sandbox and checks it is the one this bake wrote.
async function verifyMarker(provider: SandboxProvider, handle: string, where: string, path: string, expected: BaseMarker, signal: AbortSignal): Promise<void> {
  const raw = await provider.readFile(handle, path, signal);
  let found: Partial<BaseMarker> | null = null;
  try {
    found = raw ? (JSON.parse(raw.toString('utf8')) as Partial<BaseMarker>) : null;
  } catch {
    found = null;
  }
  const fields = ['kind', 'name', 'version', 'manifestHash', 'lane', 'runtime'] as const;
  const wrong = found ? fields.filter((f) => found![f] !== expected[f]) : ['the file'];
  if (wrong.length > 0) {
    throw new BakeFailedError(`marker check failed in the ${where}: ${path} ${raw ? `does not match (${wrong.join(', ')})` : 'is missing'}`, {
      context: { step: 'marker', where, path, mismatched: wrong.join(',') },
    });
  }
}

// A ready base of the same manifest hash whose snapshot the provider still has; one found expired
// or deleted is marked `gone` and baked again.
export interface BakeDeps {
  readonly bases: Pick<BaseRegistry, 'activate' | 'failCandidate' | 'markGone' | 'nextBakeGeneration' | 'promote' | 'readyByHash' | 'register'>;
  readonly config: Pick<Config, 'baseOverlayMaxBytes' | 'bakeEnvSource' | 'deadlines' | 'provider'>;
  readonly logger: Logger;
  readonly pendingCreates: Pick<PendingCreateStore, 'begin' | 'end'>;
  readonly providers: Pick<ProviderRegistry, 'get'>;
  readonly singleFlight: Pick<SingleFlight, 'using'>;
  /**
   * Archives a base's files for the first persists of workspaces made from it
   * (bake/archive-base.ts), from the provider's copy of the snapshot on this host or from a
   * sandbox just made from it (`handle`, before anything ran in it); absent where the archive
   * format has no object store.
   */
  readonly archiveBase?: ((source: BaseSource, signal: AbortSignal) => Promise<unknown>) | undefined;
}

async function reusable(deps: BakeDeps, provider: SandboxProvider, providerName: string, hash: string, signal: AbortSignal) {
  const existing = await deps.bases.readyByHash(providerName, hash);
  if (!existing) return null;
  const status = await provider.snapshotStatus(existing.snapshotId, signal);
  if (status === 'usable') return existing;
  await deps.bases.markGone(existing.snapshotId, `snapshot ${status} at provider ${providerName}`);
  deps.logger.warn({ snapshotId: existing.snapshotId, status, manifestHash: hash }, 'the ready base of this manifest is gone at the provider: baking it again');
  return null;
}

interface CandidateTest {
  readonly provider: string;
  readonly snapshotId: string;
  readonly hash: string;
  readonly marker: BaseMarker;
  readonly manifest: BaseManifest;
  readonly env: Record<string, string>;
}

// A fresh sandbox made from the candidate snapshot, as a workspace would be: the marker must be
// there and every smoke check must pass in it. The sandbox is destroyed however the test ends.
async function testCandidate(deps: BakeDeps, provider: SandboxProvider, test: CandidateTest, ctx: ProcessorContext): Promise<void> {
  const testId = `bake-test-${test.hash.slice(0, 16)}`;
  const generation = await deps.bases.nextBakeGeneration();
  await ctx.progress({ step: 'candidate', percent: 88, snapshotId: test.snapshotId });
  await deps.pendingCreates.begin(testId, generation, deps.config.deadlines.bakeMs);
  try {
    const sandbox = await provider.create({ workspaceId: testId, generation, source: { type: 'base-snapshot', snapshotId: test.snapshotId }, signal: ctx.signal });
    try {
      await verifyMarker(provider, sandbox.handle, 'sandbox made from the snapshot', test.manifest.marker, test.marker, ctx.signal);
      // Nothing has run in it yet: its tree is the snapshot's.
      await archiveFiles(deps, { provider: test.provider, snapshotId: test.snapshotId, handle: sandbox.handle }, ctx, 89);
      for (const [i, command] of test.manifest.smoke.entries()) {
        await ctx.progress({ step: 'candidate smoke', percent: 90 + Math.round((8 * i) / test.manifest.smoke.length), done: i, total: test.manifest.smoke.length });
        await runStep(provider, sandbox.handle, `smoke check ${i + 1} in a sandbox made from the snapshot`, command, test.env, ctx);
      }
    } finally {
      await provider.destroy(sandbox.handle, AbortSignal.timeout(60_000)).catch(() => undefined);
    }
  } finally {
    await deps.pendingCreates.end(testId, generation).catch(() => undefined);
  }
}

// Archives a base's files. An archive is only a shortcut for later persists: a failure is
// logged, never a failed bake.
async function archiveFiles(deps: BakeDeps, source: BaseSource, ctx: ProcessorContext, percent: number): Promise<void> {
  if (!deps.archiveBase) return;
  await ctx.progress({ step: 'archive', percent, snapshotId: source.snapshotId });
  try {
    await deps.archiveBase(source, ctx.signal);
  } catch (error) {
    deps.logger.warn({ err: error, snapshotId: source.snapshotId }, 'archiving the base failed: workspaces made from it read every file on their first persist');
  }
}

export async function bakeBase(deps: BakeDeps, payload: BakePayload, ctx: ProcessorContext): Promise<BakeResult> {
  const started = Date.now();
  const { manifest } = payload;
  const hash = manifestHash(manifest);
  const version = manifestVersion(manifest, hash);
  const providerName = payload.provider ?? deps.config.provider;
  const provider = deps.providers.get(providerName);
  const finish = async (snapshotId: string, reused: boolean): Promise<BakeResult> => {
    const activated = payload.activate ? (await deps.bases.activate(snapshotId), true) : false;
    return { snapshotId, version, manifestHash: hash, provider: providerName, lane: manifest.lane, reused, activated, durationMs: Date.now() - started };
  };

  // An overlay no workspace could be given fails before anything is made.
  const overlaySize = overlayBytes(manifest.overlay);
  if (overlaySize > deps.config.baseOverlayMaxBytes) {
    throw new BakeFailedError(`the overlay is ${overlaySize} bytes, over FLEET_BASE_OVERLAY_MAX_BYTES (${deps.config.baseOverlayMaxBytes})`, {
      context: { step: 'overlay', bytes: overlaySize, limit: deps.config.baseOverlayMaxBytes },
    });
  }

  return deps.singleFlight.using(`bake:${hash}`, { maxHoldMs: deps.config.deadlines.bakeMs }, async (lock) => {
    const signal = anySignal([ctx.signal, lock.signal]);
    const existing = await reusable(deps, provider, providerName, hash, signal);
    if (existing) {
      // A base ready before bakes archived their files gets its archive now (where the host has its snapshot).
      await archiveFiles(deps, { provider: providerName, snapshotId: existing.snapshotId, handle: null }, ctx, 95);
      await ctx.progress({ step: 'reuse', percent: 100, snapshotId: existing.snapshotId });
      return finish(existing.snapshotId, true);
    }
    const seedId = `bake-${hash.slice(0, 16)}`;
    const generation = await deps.bases.nextBakeGeneration();
    await ctx.progress({ step: 'seed', percent: 5 });
    // The seed is never published: its lease keeps orphan GC away from it while the bake runs.
    await deps.pendingCreates.begin(seedId, generation, deps.config.deadlines.bakeMs);
    const seed = await provider.create({ workspaceId: seedId, generation, source: { type: 'empty' }, runtime: manifest.runtime, signal }).catch(async (error: unknown) => {
      await deps.pendingCreates.end(seedId, generation).catch(() => undefined);
      throw error;
    });
    const stepCtx = withSignal(ctx, signal);
    let candidate: string | null = null;
    try {
      await ctx.progress({ step: 'files', percent: 10 });
      if (manifest.files.length > 0) {
        await provider.writeFiles(seed.handle, manifest.files.map((f) => ({ path: f.path, content: Buffer.from(f.content), mode: f.mode })), signal);
      }
      const env = setupEnv(manifest, deps.config.bakeEnvSource);
      if (manifest.packages.length > 0) {
        await ctx.progress({ step: 'packages', percent: 20 });
        // Local hosts cannot install packages into a tree: the host must already have them.
        const command = providerName === 'local' ? `dpkg-query -W ${manifest.packages.join(' ')} >/dev/null` : `sudo apt-get install -y --no-install-recommends ${manifest.packages.join(' ')}`;
        await runStep(provider, seed.handle, 'packages', command, env, stepCtx);
      }
      for (const [i, command] of manifest.setup.entries()) {
        await ctx.progress({ step: 'setup', percent: 25 + Math.round((45 * i) / manifest.setup.length), done: i, total: manifest.setup.length });
        await runStep(provider, seed.handle, `setup command ${i + 1}`, command, env, stepCtx);
      }
      await ctx.progress({ step: 'marker', percent: 70 });
      const marker: BaseMarker = { kind: 'base', name: manifest.name, version, manifestHash: hash, lane: manifest.lane, runtime: manifest.runtime, bakedAt: new Date().toISOString() };
      await provider.writeFiles(seed.handle, [{ path: manifest.marker, content: Buffer.from(`${JSON.stringify(marker, null, 2)}\n`), mode: 0o644 }], signal);
      await verifyMarker(provider, seed.handle, 'seed sandbox', manifest.marker, marker, signal);
      for (const [i, command] of manifest.smoke.entries()) {
        await ctx.progress({ step: 'smoke', percent: 72 + Math.round((8 * i) / manifest.smoke.length), done: i, total: manifest.smoke.length });
        await runStep(provider, seed.handle, `smoke check ${i + 1}`, command, env, stepCtx);
      }
      await ctx.progress({ step: 'snapshot', percent: 80 });
      // Base snapshots never expire on their own: `expiration: 0` is the provider contract for
      // "keep until deleted" (reference/vercel-sandbox.md, snapshots). Bases must outlive any
      // workspace that references them and at least FLEET_BASE_RETENTION_MS; GC deletes them.
      // What the provider made is checked, not assumed: one that will expire fails the bake.
      const taken = await provider.snapshot(seed.handle, { expirationMs: 0, signal });
      if (taken.expiresAt !== null) {
        await provider.deleteSnapshot(taken.snapshotId, AbortSignal.timeout(60_000)).catch(() => undefined);
        throw new BakeFailedError(`the provider gave snapshot ${taken.snapshotId} an expiry (${new Date(taken.expiresAt).toISOString()}) although none was asked: a base must never expire`, {
          context: { step: 'snapshot', snapshotId: taken.snapshotId, expiresAt: taken.expiresAt },
        });
      }
      const snapshotId = taken.snapshotId;
      await ctx.progress({ step: 'register', percent: 85, snapshotId });
      await deps.bases.register({
        provider: providerName,
        snapshotId,
        version,
        manifestHash: hash,
        name: manifest.name,
        runtime: manifest.runtime,
        lane: manifest.lane,
        status: 'candidate',
        sourceSandboxId: seed.handle,
        error: null,
        createdAt: started,
        readyAt: null,
        expiresAt: null,
      }, { overlay: manifest.overlay, migrate: manifest.migrate, smoke: manifest.smoke });
      candidate = snapshotId;
      await testCandidate(deps, provider, { provider: providerName, snapshotId, hash, marker, manifest, env }, stepCtx);
      if (!(await deps.bases.promote(snapshotId))) {
        throw new BakeFailedError(`base snapshot ${snapshotId} stopped being a candidate while it was tested`, { context: { step: 'register', snapshotId } });
      }
      await ctx.progress({ step: 'done', percent: 100, snapshotId });
      return await finish(snapshotId, false);
    } catch (error) {
      if (error instanceof BakeFailedError && candidate !== null) {
        // The snapshot failed its test: never activatable, and nothing will start from it. Only a
        // snapshot this bake recorded failed is deleted (never one someone activated meanwhile).
        if (await deps.bases.failCandidate(candidate, error.message)) {
          await provider.deleteSnapshot(candidate, AbortSignal.timeout(60_000)).catch(() => undefined);
        }
      } else if (error instanceof BakeFailedError) {
        await deps.bases.register({
          provider: providerName,
          snapshotId: `failed-${hash.slice(0, 12)}-${randomBytes(3).toString('hex')}`,
          version,
          manifestHash: hash,
          name: manifest.name,
          runtime: manifest.runtime,
          lane: manifest.lane,
          status: 'failed',
          sourceSandboxId: seed.handle,
          error: error.message,
          createdAt: started,
          readyAt: null,
          expiresAt: null,
        });
      }
      throw error;
    } finally {
      await provider.destroy(seed.handle, AbortSignal.timeout(60_000)).catch(() => undefined);
      await deps.pendingCreates.end(seedId, generation).catch(() => undefined);
    }
  });
}
