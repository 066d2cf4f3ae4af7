// Processors are functions of narrow deps: here they run against plain objects (no Redis, no
// provider), which is what the deps interfaces are for.
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import type { ProcessorContext } from '../../src/jobs/processor-context.js';
import type { SandboxProvider } from '../../src/providers/sandbox-provider.js';
import type { Address } from '../../src/state/address-store.js';
import { checkpointProcessor, type CheckpointDeps } from '../../src/workers/processors/checkpoint.js';
import { stopWorkspace, type StopDeps } from '../../src/workers/processors/stop-workspace.js';

const logger = pino({ level: 'silent' });
const ctx: ProcessorContext = { logger, signal: new AbortController().signal, queue: 'checkpoint@h1', jobId: 'j1', attempt: 1, maxAttempts: 1, deadlineAt: Date.now() + 60_000, progress: async () => undefined };
const address: Address = { workspaceId: 'ws', handle: 'local:h1:ws:g3', generation: 3, hostId: 'h1', provider: 'local', publishedAt: 1 };

// A provider whose only method in use is `get` (and `stop`), recording calls.
function provider(state: 'running' | 'stopped' | null, calls: string[]): SandboxProvider {
  return {
    get: async (handle: string) => (calls.push(`get ${handle}`), state && { handle, workspaceId: 'ws', generation: 3, hostId: 'h1', state }),
    stop: async (handle: string) => void calls.push(`stop ${handle}`),
  } as unknown as SandboxProvider;
}

function checkpointDeps(current: Address | null, state: 'running' | 'stopped' | null, calls: string[]): CheckpointDeps {
  return {
    addresses: { get: async () => current },
    providerFor: () => provider(state, calls),
    client: { persist: async (request: unknown) => (calls.push(`persist ${JSON.stringify(request)}`), { jobId: 'p1', seq: 7 }) } as unknown as CheckpointDeps['client'],
  };
}

describe('checkpoint processor (plain deps)', () => {
  it('enqueues an upload-only checkpoint persist of a running incarnation of its generation', async () => {
    const calls: string[] = [];
    const result = await checkpointProcessor(checkpointDeps(address, 'running', calls))({ workspaceId: 'ws', generation: 3 }, ctx);
    expect(result).toEqual({ persistJobId: 'p1', seq: 7 });
    expect(calls).toEqual(['get local:h1:ws:g3', 'persist {"workspaceId":"ws","generation":3,"delete":false,"reason":"checkpoint"}']);
  });

  it('does nothing for a replaced generation or a stopped sandbox', async () => {
    const calls: string[] = [];
    expect(await checkpointProcessor(checkpointDeps(address, 'running', calls))({ workspaceId: 'ws', generation: 2 }, ctx)).toEqual({ skipped: 'stale-generation' });
    expect(await checkpointProcessor(checkpointDeps(null, 'running', calls))({ workspaceId: 'ws', generation: 3 }, ctx)).toEqual({ skipped: 'stale-generation' });
    expect(await checkpointProcessor(checkpointDeps(address, 'stopped', calls))({ workspaceId: 'ws', generation: 3 }, ctx)).toEqual({ skipped: 'stopped' });
    expect(calls.filter((c) => c.startsWith('persist'))).toEqual([]);
  });
});

describe('stopWorkspace (plain deps)', () => {
  function stopDeps(calls: string[], { quiescent, applied }: { quiescent: boolean; applied: boolean }): StopDeps {
    return {
      addresses: { get: async () => address, lastActivity: async () => 0 },
      activity: { quiescent: async () => quiescent },
      config: { idleTtlMs: 60_000 },
      runtime: { transition: async (_ws: string, name: string) => (calls.push(`transition ${name}`), { applied, state: 'stopped', generation: 3 }) } as unknown as StopDeps['runtime'],
      client: { stopCheckpoints: async () => void calls.push('stopCheckpoints') } as unknown as StopDeps['client'],
      events: { emit: async (event) => (calls.push(`event ${event.type} ${event.workspaceId}`), '1-0') },
      providerFor: () => provider('running', calls),
    };
  }

  it('stops an idle incarnation: fenced transition, then the schedule, then the sandbox, then tells it', async () => {
    const calls: string[] = [];
    await stopWorkspace(stopDeps(calls, { quiescent: true, applied: true }), 'ws', 3, ctx.signal, logger);
    expect(calls).toEqual(['transition stop', 'stopCheckpoints', 'stop local:h1:ws:g3', 'event reaped ws']);
  });

  it('leaves a workspace that became active, or whose runtime moved on, running', async () => {
    const active: string[] = [];
    await stopWorkspace(stopDeps(active, { quiescent: false, applied: true }), 'ws', 3, ctx.signal, logger);
    expect(active).toEqual([]);
    const movedOn: string[] = [];
    await stopWorkspace(stopDeps(movedOn, { quiescent: true, applied: false }), 'ws', 3, ctx.signal, logger);
    expect(movedOn).toEqual(['transition stop']);
  });
});
