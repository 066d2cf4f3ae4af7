// One provisioned Vercel workspace for tests: the real @vercel/sandbox SDK against the loopback
// stand-in, the fleet's services in this process (format 2), and the calls tests make on it.
import { expect } from 'vitest';
import { provisionWorkspace } from '../../src/provision/provision-workspace.js';
import { mirrorPaths, type MirrorPaths } from '../../src/providers/vercel/mirror-paths.js';
import type { SandboxProvider } from '../../src/providers/sandbox-provider.js';
import type { PersistRequest } from '../../src/persist/persist-workspace.js';
import type { PersistResult } from '../../src/queues/persist.js';
import { liveFacts, revisionFacts } from './revision-facts.js';
import { createVercelHarness } from './vercel-harness.js';
import type { RecordedRequest, VercelStandin } from './vercel-standin/vercel-standin.js';
import type { Harness } from './workspace-harness.js';

export interface VercelWorkspace {
  readonly standin: VercelStandin;
  readonly h: Harness;
  readonly vercel: SandboxProvider;
  readonly workspaceId: string;
  readonly handle: string;
  readonly mirror: MirrorPaths;
  /** The sandbox's tree on the host (the stand-in's commands run here). */
  readonly live: string;
  /** Runs `sh -c script` in the tree; fails the test on a non-zero exit; returns stdout. */
  sh(script: string): Promise<string>;
  /** A persist (turn-end reconcile unless overridden) and the stand-in requests it made. */
  persist(options?: Partial<PersistRequest>): Promise<{ result: PersistResult; requests: RecordedRequest[] }>;
  /** Asserts the current revision is exactly the sandbox's tree. */
  expectArchived(): Promise<void>;
}

const signal = () => AbortSignal.timeout(60_000);

export async function vercelWorkspace(workspaceId = 'vd', overrides: Record<string, string> = {}): Promise<VercelWorkspace> {
  const { standin, h } = await createVercelHarness({ FLEET_ARCHIVE_FORMAT: '2', ...overrides });
  const vercel = h.services.providers.get('vercel');
  const { handle } = await provisionWorkspace(h.services, { workspaceId, provider: 'vercel', lane: 'default' }, h.ctx());
  const live = standin.sandboxDir(handle, '/vercel/sandbox/workspace');
  return {
    standin,
    h,
    vercel,
    workspaceId,
    handle,
    mirror: mirrorPaths(h.config.paths.vercelMirrorRoot, handle),
    live,
    async sh(script) {
      const ran = await vercel.exec(handle, { cmd: ['sh', '-c', script], timeoutMs: 30_000, signal: signal() });
      expect(ran.exitCode, `${script}: ${ran.stderr}`).toBe(0);
      return ran.stdout;
    },
    async persist(options = {}) {
      const from = standin.requests.length;
      const result = await h.persist(workspaceId, options);
      return { result, requests: standin.requests.slice(from) };
    },
    async expectArchived() {
      expect(await revisionFacts(h.services.archive, workspaceId)).toEqual(await liveFacts(live));
    },
  };
}

/** How many requests of `route` a persist made. */
export const countRoute = (requests: readonly RecordedRequest[], route: string): number => requests.filter((r) => r.route === route).length;
