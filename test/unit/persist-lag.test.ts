// The fleet-wide persist lag over the stores' batched reads, with plain objects for the stores.
import { describe, expect, it } from 'vitest';
import type { RuntimeState } from '../../src/state/runtime-store.js';
import { readPersistLag, type PersistLagDeps } from '../../src/status/persist-lag.js';

interface Row {
  readonly publishedAt: number | null;
  readonly capturedAt?: number;
  readonly completedAt?: number;
  readonly state?: RuntimeState | null;
}

// Stores answering from a table, counting the batches they are asked for.
function stores(rows: Record<string, Row>) {
  const batches: number[] = [];
  const row = (ws: string) => rows[ws]!;
  const deps: PersistLagDeps = {
    addresses: {
      known: async () => Object.keys(rows).sort(),
      publishedAtOf: async (ids) => {
        batches.push(ids.length);
        return ids.map((ws) => row(ws).publishedAt);
      },
    },
    intents: { caughtUpOf: async (ids) => ids.map((ws) => ({ completedAt: row(ws).completedAt ?? 0, capturedAt: row(ws).capturedAt ?? 0 })) },
    runtime: { statesOf: async (ids) => ids.map((ws) => row(ws).state ?? null) },
  };
  return { deps, batches };
}

describe('readPersistLag', () => {
  it('counts published, not stopped workspaces, from the start of their newest run', async () => {
    const { deps } = stores({
      a: { publishedAt: 1_000, capturedAt: 7_000, completedAt: 9_000, state: 'ready' },
      b: { publishedAt: 8_000 },
      gone: { publishedAt: null, capturedAt: 1 },
      stopped: { publishedAt: 1_000, state: 'stopped' },
    });
    expect(await readPersistLag(deps, 10_000)).toEqual({ activeWorkspaces: 2, maxPersistLagMs: 3_000, lags: [3_000, 2_000] });
  });

  it('reads the stores in batches of 500 workspaces', async () => {
    const rows = Object.fromEntries(Array.from({ length: 1_201 }, (_, i) => [`ws${String(i).padStart(4, '0')}`, { publishedAt: i } as Row]));
    const { deps, batches } = stores(rows);
    const lag = await readPersistLag(deps, 2_000);
    expect(batches).toEqual([500, 500, 201]);
    expect(lag.activeWorkspaces).toBe(1_201);
    expect(lag.maxPersistLagMs).toBe(2_000);
  });

  it('reports no lag without active workspaces', async () => {
    expect(await readPersistLag(stores({}).deps, 5)).toEqual({ activeWorkspaces: 0, maxPersistLagMs: 0, lags: [] });
  });
});
