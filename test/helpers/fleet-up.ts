// `fleet up` for front-door tests, for either provider: the test environment (Vercel: the real SDK
// against a loopback stand-in, closed after the test) and a running `fleet up`, killed after the test.
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { addCleanup } from './cleanup.js';
import { testEnv } from './fleet-env.js';
import { killGroup, startFleet, type Spawned } from './processes.js';
import { VercelStandin } from './vercel-standin/vercel-standin.js';
import { standinEnv } from './vercel-standin/standin-env.js';

export type TestProvider = 'local' | 'vercel';

/** The environment of a `fleet up` on `provider` (its own Redis prefix and home); the stand-in for Vercel. */
export async function providerTestEnv(provider: TestProvider, overrides: Record<string, string> = {}): Promise<{ env: Record<string, string>; standin: VercelStandin | null }> {
  const base = { FLEET_HTTP_PORT: '0', FLEET_GC_SCHEDULE: 'idle=off,orphans=off', ...overrides };
  if (provider === 'local') return { env: await testEnv(base), standin: null };
  const standin = await VercelStandin.start();
  addCleanup(() => standin.close());
  return { env: await testEnv({ ...standinEnv(standin), ...base }), standin };
}

/** Starts `fleet up` with `env` and resolves once it prints its web address. */
export async function startFleetUp(env: Record<string, string>): Promise<Spawned> {
  const up = startFleet(['up'], env);
  addCleanup(() => killGroup(up.child, 'SIGTERM'));
  await up.waitForOutput(/web\s+http:\/\/127\.0\.0\.1:\d+/, 60_000);
  return up;
}

/** A running `fleet up` (killed after the test) whose host a test can lose. */
export interface LosableFleetUp {
  /**
   * The sandboxes of `workspaceIds` are lost: on Vercel at the provider (`loseVercel`), locally
   * with their host (fleet up SIGKILLed, the workspaces' live trees gone, fleet up started again).
   */
  lose(workspaceIds: readonly string[], loseVercel: (() => Promise<void>) | null): Promise<void>;
  /** Resolves once the running `fleet up`'s stdout (or `stream`), since it last started, contains `text`. */
  waitForOutput(text: string | RegExp, timeoutMs?: number, stream?: 'stdout' | 'stderr'): Promise<void>;
}

/** Starts `fleet up` with `env` and resolves once its workers run. */
export async function startLosableFleetUp(env: Record<string, string>): Promise<LosableFleetUp> {
  let up = startFleet(['up'], env);
  addCleanup(async () => {
    killGroup(up.child, 'SIGKILL');
    await up.exited;
  });
  await up.waitForOutput('workers', 60_000);
  return {
    async lose(workspaceIds, loseVercel) {
      if (loseVercel) return loseVercel();
      killGroup(up.child, 'SIGKILL');
      await up.exited;
      for (const workspaceId of workspaceIds) await rm(path.join(env.FLEET_HOME!, 'live', workspaceId), { recursive: true, force: true });
      up = startFleet(['up'], env);
      await up.waitForOutput('workers', 60_000);
    },
    waitForOutput: (text, timeoutMs, stream) => up.waitForOutput(text, timeoutMs, stream),
  };
}
