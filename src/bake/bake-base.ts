/**
 * Baking a base snapshot (G6, G8), under the `bake:{manifestHash}` lock:
 *   reuse a ready snapshot of the same hash, else
 *   seed sandbox → template files → packages → setup (allowlisted env only) → marker →
 *   smoke checks → snapshot (never expires) → register ready → optionally activate.
 * Progress is reported at every step. A failing setup or smoke check registers the bake as
 * `failed` (never activatable) and destroys the seed sandbox.
 */
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
import type { ProcessorContext } from '../jobs/processor-context.js';
import { manifestHash, manifestVersion } from '../queues/manifest-hash.js';
import type { BaseManifest } from '../queues/base-manifest.js';

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
  if (result.exitCode !== 0 || result.timedOut) {
    const tail = (result.stderr || result.stdout).trim().split('\n').slice(-5).join(' | ');
    throw new BakeFailedError(`${step} failed (exit ${result.exitCode ?? result.signal}${result.timedOut ? ', timed out' : ''}): ${command} → ${tail}`, {
      context: { step, command, exitCode: result.exitCode },
    });
  }
}

// A ready base of the same manifest hash whose snapshot the provider still has; one found expired
// or deleted is marked `gone` and baked again.
export interface BakeDeps {
  readonly bases: Pick<BaseRegistry, 'activate' | 'markGone' | 'nextBakeGeneration' | 'readyByHash' | 'register'>;
  readonly config: Pick<Config, 'bakeEnvSource' | 'deadlines' | 'provider'>;
  readonly logger: Logger;
  readonly pendingCreates: Pick<PendingCreateStore, 'begin' | 'end'>;
  readonly providers: Pick<ProviderRegistry, 'get'>;
  readonly singleFlight: Pick<SingleFlight, 'using'>;
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

  return deps.singleFlight.using(`bake:${hash}`, { maxHoldMs: deps.config.deadlines.bakeMs }, async (lock) => {
    const signal = AbortSignal.any([ctx.signal, lock.signal]);
    const existing = await reusable(deps, provider, providerName, hash, signal);
    if (existing) {
      await ctx.progress({ step: 'reuse', percent: 100, snapshotId: existing.snapshotId });
      return finish(existing.snapshotId, true);
    }
    const seedId = `bake-${hash.slice(0, 16)}`;
    const generation = await deps.bases.nextBakeGeneration();
    await ctx.progress({ step: 'seed', percent: 5 });
    // The seed is never published: its lease keeps orphan GC away from it while the bake runs.
    await deps.pendingCreates.begin(seedId, generation, deps.config.deadlines.bakeMs);
    const seed = await provider.create({ workspaceId: seedId, generation, source: { type: 'empty' }, signal }).catch(async (error: unknown) => {
      await deps.pendingCreates.end(seedId, generation).catch(() => undefined);
      throw error;
    });
    const stepCtx = { ...ctx, signal };
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
        await ctx.progress({ step: 'setup', percent: 25 + Math.round((50 * i) / manifest.setup.length), done: i, total: manifest.setup.length });
        await runStep(provider, seed.handle, `setup command ${i + 1}`, command, env, stepCtx);
      }
      await ctx.progress({ step: 'marker', percent: 75 });
      const marker = { name: manifest.name, version, manifestHash: hash, lane: manifest.lane, bakedAt: new Date().toISOString() };
      await provider.writeFiles(seed.handle, [{ path: manifest.marker, content: Buffer.from(`${JSON.stringify(marker, null, 2)}\n`), mode: 0o644 }], signal);
      for (const [i, command] of manifest.smoke.entries()) {
        await ctx.progress({ step: 'smoke', percent: 80 + Math.round((10 * i) / manifest.smoke.length), done: i, total: manifest.smoke.length });
        await runStep(provider, seed.handle, `smoke check ${i + 1}`, command, env, stepCtx);
      }
      await ctx.progress({ step: 'snapshot', percent: 90 });
      // Base snapshots never expire on their own: `expiration: 0` is the provider contract for
      // "keep until deleted" (reference/vercel-sandbox.md, snapshots). Bases must outlive any
      // workspace that references them and at least FLEET_BASE_RETENTION_MS; GC deletes them.
      const { snapshotId } = await provider.snapshot(seed.handle, { expirationMs: 0, signal });
      await ctx.progress({ step: 'register', percent: 97, snapshotId });
      const now = Date.now();
      await deps.bases.register({
        provider: providerName,
        snapshotId,
        version,
        manifestHash: hash,
        name: manifest.name,
        runtime: manifest.runtime,
        lane: manifest.lane,
        status: 'ready',
        sourceSandboxId: seed.handle,
        error: null,
        createdAt: started,
        readyAt: now,
        expiresAt: null,
      });
      await ctx.progress({ step: 'done', percent: 100, snapshotId });
      return await finish(snapshotId, false);
    } catch (error) {
      if (error instanceof BakeFailedError) {
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
