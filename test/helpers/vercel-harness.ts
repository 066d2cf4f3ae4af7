// A workspace harness whose default provider is Vercel: the real @vercel/sandbox SDK against a
// loopback stand-in started for the test (closed when it ends).
import { expect } from 'vitest';
import { provisionWorkspace } from '../../src/provision/provision-workspace.js';
import type { ProvisionResult } from '../../src/queues/provision.js';
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

/** Provisions a Vercel workspace through the harness, and runs a shell script in a sandbox (it must succeed; its stdout). */
export function vercelShell(h: Harness): { provision: (workspaceId: string) => Promise<ProvisionResult>; sh: (handle: string, script: string) => Promise<string> } {
  const vercel = h.services.providers.get('vercel');
  return {
    provision: (workspaceId) => provisionWorkspace(h.services, { workspaceId, provider: 'vercel', lane: 'default' }, h.ctx()),
    async sh(handle, script) {
      const ran = await vercel.exec(handle, { cmd: ['sh', '-c', script], timeoutMs: 30_000, signal: AbortSignal.timeout(30_000) });
      expect(ran.exitCode, `${script}: ${ran.stderr}`).toBe(0);
      return ran.stdout;
    },
  };
}
