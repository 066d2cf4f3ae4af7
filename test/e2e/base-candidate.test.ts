// A base is tested before it may be activated, driven as an operator does (a running `fleet up`
// and the CLI), for the local provider and for Vercel (the real SDK against the loopback
// stand-in): a bake ends with a sandbox made from the new snapshot passing the marker and smoke
// checks; a snapshot that fails there is recorded failed and never activatable; an untested
// candidate is activated only with --force; a base deleted at the provider is never handed out
// again, and a bake of its manifest bakes anew; and a snapshot the provider gives an expiry fails the bake.
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { fleetKeys } from '../../src/keys.js';
import { BaseRegistry, type BaseEntry } from '../../src/state/base-registry.js';
import { tempDir, testConnection } from '../helpers/fleet-env.js';
import { providerTestEnv, startFleetUp } from '../helpers/fleet-up.js';
import { cliJson, runFleet } from '../helpers/processes.js';
import { standinProvider } from '../helpers/vercel-standin/standin-provider.js';
import type { VercelStandin } from '../helpers/vercel-standin/vercel-standin.js';

async function manifestFile(name: string, smoke: string[]): Promise<string> {
  const file = path.join(await tempDir('base-candidate'), `${name}.json`);
  await writeFile(file, JSON.stringify({ schemaVersion: 1, name, runtime: 'node22', setup: ['mkdir -p src && echo ok > src/app.txt'], smoke }));
  return file;
}

// Runs the shared checks against a fleet started with `env`.
async function checkCandidates(env: Record<string, string>, provider: 'local' | 'vercel') {
  await startFleetUp(env);
  const ok = async <T,>(args: string[]): Promise<T> => {
    const result = await runFleet([...args, '--json'], env);
    expect(result.code, `fleet ${args.join(' ')}: ${result.stdout} ${result.stderr}`).toBe(0);
    return cliJson(result.stdout) as T;
  };
  const failing = async (args: string[]) => {
    const result = await runFleet([...args, '--json'], env);
    expect(result.code, `fleet ${args.join(' ')} should fail: ${result.stdout}`).not.toBe(0);
    return (JSON.parse(result.stdout) as { ok: false; error: { code: string; message: string; context: Record<string, unknown> } }).error;
  };
  const list = async () => (await ok<{ bases: BaseEntry[] }>(['base', 'list'])).bases;

  // A good base: tested in a sandbox made from it, then ready and active.
  const good = await ok<{ snapshotId: string; activated: boolean }>(['bake', await manifestFile('good', ['test -f src/app.txt', 'test -f .fleet-base.json']), '--activate', '--wait']);
  expect(good.activated).toBe(true);
  expect((await list()).find((b) => b.snapshotId === good.snapshotId)).toMatchObject({ provider, status: 'ready', active: true, testedAt: expect.any(Number) });

  // A smoke check that passes in the seed but not in a sandbox made from the snapshot (it leaves a
  // file behind, which the snapshot keeps): the candidate fails, is recorded failed, and cannot be activated.
  const error = await failing(['bake', await manifestFile('leaves-residue', ['test ! -f .smoke-ran && touch .smoke-ran']), '--wait']);
  expect(error.code).toBe('BakeFailed');
  expect(error.message).toMatch(/in a sandbox made from the snapshot/);
  const failed = (await list()).find((b) => b.name === 'leaves-residue')!;
  expect(failed).toMatchObject({ status: 'failed', testedAt: expect.any(Number) });
  expect((await failing(['base', 'activate', failed.snapshotId])).message).toMatch(/is failed, only a ready snapshot can be activated/);
  // Still the good one: nothing new starts from the failed snapshot.
  expect((await list()).filter((b) => b.active).map((b) => b.snapshotId)).toEqual([good.snapshotId]);

  // An untested candidate (a bake that ended before its test, recorded as the registry would):
  // refused without --force, activated with it.
  const config = loadConfig(env);
  const registry = new BaseRegistry(testConnection(config), fleetKeys(config.redis.prefix, config.redis.keyLayout));
  const candidateId = provider === 'local' ? 'snap-candidate-g1-0000aaaa' : good.snapshotId.replace(/.$/, (c) => (c === 'a' ? 'b' : 'a'));
  await registry.register({ ...(await registry.get(good.snapshotId))!, snapshotId: candidateId, manifestHash: 'f'.repeat(64), status: 'candidate', previousSnapshotId: null, readyAt: null, testedAt: null, rotatedAt: null, createdAt: Date.now() });
  expect((await failing(['base', 'activate', candidateId])).message).toMatch(/is candidate, only a ready snapshot can be activated .*--force/);
  expect(await ok(['base', 'activate', candidateId, '--force'])).toEqual({ active: candidateId, previous: good.snapshotId, forced: true });
}

// A base whose snapshot the provider no longer has (deleted by hand, or by the provider) is never
// reused: provisioning from it is refused and marks it gone; a bake of the same manifest bakes a
// new snapshot instead of handing the old id out again.
async function checkDeletedBase(env: Record<string, string>, provider: 'local' | 'vercel', standin: VercelStandin | null) {
  const run = (args: string[]) => runFleet([...args, '--json'], env);
  const ok = async <T,>(args: string[]): Promise<T> => {
    const result = await run(args);
    expect(result.code, `fleet ${args.join(' ')}: ${result.stdout} ${result.stderr}`).toBe(0);
    return cliJson(result.stdout) as T;
  };
  const manifest = await manifestFile('deleted-later', ['test -f src/app.txt']);
  const baked = await ok<{ snapshotId: string; reused: boolean; activated: boolean }>(['bake', manifest, '--activate', '--wait']);
  expect(baked).toMatchObject({ reused: false, activated: true });
  // While the snapshot is there, the same manifest reuses it.
  expect(await ok(['bake', manifest, '--activate', '--wait'])).toMatchObject({ snapshotId: baked.snapshotId, reused: true });

  if (standin) await standinProvider(standin).deleteSnapshot(baked.snapshotId, AbortSignal.timeout(30_000));
  else await rm(path.join(loadConfig(env).paths.snapshotRoot, baked.snapshotId), { recursive: true });

  const refused = await run(['provision', 'from-deleted', '--wait']);
  expect(refused.code, refused.stdout).not.toBe(0);
  expect((JSON.parse(refused.stdout) as { error: { code: string } }).error.code).toBe('SnapshotUnavailable');
  const bases = (await ok<{ bases: BaseEntry[] }>(['base', 'list'])).bases;
  expect(bases.find((b) => b.snapshotId === baked.snapshotId)).toMatchObject({ provider, status: 'gone' });

  const again = await ok<{ snapshotId: string; reused: boolean; activated: boolean }>(['bake', manifest, '--activate', '--wait']);
  expect(again).toMatchObject({ reused: false, activated: true });
  expect(again.snapshotId).not.toBe(baked.snapshotId);
  expect(await ok(['provision', 'from-deleted', '--wait'])).toMatchObject({ outcome: 'created-from-base', source: again.snapshotId });
}

describe.each(['local', 'vercel'] as const)('base candidates are tested before activation (%s)', (provider) => {
  it(`bakes, tests candidates, refuses untested ones without --force, never reuses a base deleted at the provider${provider === 'vercel' ? '; a snapshot the provider gives an expiry fails the bake' : ''}`, { timeout: 240_000 }, async () => {
    const { env, standin } = await providerTestEnv(provider);
    const seeds = standin?.nextRequest('createSandbox', (r) => r.path === '/v2/sandboxes');
    await checkCandidates(env, provider);
    await checkDeletedBase(env, provider, standin);
    if (!standin) return;
    // The seed sandbox was made with the manifest's runtime: the SDK creates with a runtime on
    // POST /v2/sandboxes (without one on /v3), and the stand-in refuses a /v2 create without it.
    expect(await seeds).toMatchObject({ method: 'POST', path: '/v2/sandboxes' });

    // The server keeps snapshots one day at most, whatever was asked.
    standin.state.snapshotExpiryCapMs = 86_400_000;
    const result = await runFleet(['bake', await manifestFile('expiring', ['true']), '--wait', '--json'], env);
    expect(result.code).not.toBe(0);
    const error = (JSON.parse(result.stdout) as { error: { code: string; message: string; context: { snapshotId: string } } }).error;
    expect(error).toMatchObject({ code: 'BakeFailed', context: { step: 'snapshot' } });
    expect(error.message).toMatch(/gave snapshot \S+ an expiry .* a base must never expire/);
    // The expiring snapshot was deleted at the provider, and no base was registered ready from it.
    expect(standin.state.snapshots.get(error.context.snapshotId)?.status ?? 'absent').not.toBe('created');
    const bases = cliJson((await runFleet(['base', 'list', '--json'], env)).stdout) as { bases: BaseEntry[] };
    expect(bases.bases.filter((b) => b.name === 'expiring').map((b) => b.status)).toEqual(['failed']);
  });
});
