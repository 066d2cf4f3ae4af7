// A workspace harness whose default provider is Vercel: the real @vercel/sandbox SDK against a
// loopback stand-in started for the test (closed when it ends).
import { addCleanup } from './cleanup.js';
import { standinEnv } from './vercel-standin/standin-env.js';
import { VercelStandin } from './vercel-standin/vercel-standin.js';
import { createHarness, type Harness } from './workspace-harness.js';

export async function createVercelHarness(overrides: Record<string, string> = {}): Promise<{ standin: VercelStandin; h: Harness }> {
  const standin = await VercelStandin.start();
  addCleanup(() => standin.close());
  const h = await createHarness({ ...standinEnv(standin), ...overrides });
  return { standin, h };
}
