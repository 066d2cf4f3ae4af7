// The runtime resource as an operator reads it (`fleet workspace show` against a running `fleet
// up`), for the local provider and for Vercel (the real SDK against the loopback stand-in): what
// the handle is, the provider's session, the last use. On Vercel, one durable sandbox name
// carries the workspace across generations: lost at the provider, replaced while it still held
// the name, and stopped and resumed by name, it is always `fleet-<ws>`, and the files come along.
import { describe, expect, it } from 'vitest';
import { providerTestEnv, startFleetUp, type TestProvider } from '../helpers/fleet-up.js';
import { cliJson, runFleet } from '../helpers/processes.js';
import { standinProvider } from '../helpers/vercel-standin/standin-provider.js';

interface Runtime {
  handle: string;
  handleKind: string;
  generation: number;
  currentSessionId: string | null;
  currentSnapshotId: string | null;
  lastUsedAt: number | null;
  state: string;
}
interface Provisioned {
  handle: string;
  generation: number;
  outcome: string;
}

describe.each<TestProvider>(['local', 'vercel'])('runtime resource fields on %s', (provider) => {
  it('records what the handle is, the session, and the last use, kept current by use', { timeout: 120_000 }, async () => {
    const { env } = await providerTestEnv(provider);
    await startFleetUp(env);
    const ok = async <T>(args: string[]): Promise<T> => {
      const result = await runFleet([...args, '--json'], env);
      expect(result.code, `fleet ${args.join(' ')}: ${result.stdout} ${result.stderr}`).toBe(0);
      return cliJson(result.stdout) as T;
    };
    const runtime = async () => (await ok<{ runtime: Runtime }>(['workspace', 'show', 'ws'])).runtime;
    const first = await ok<Provisioned>(['provision', 'ws', '--wait']);
    const shown = await runtime();
    expect(shown).toMatchObject({ handle: first.handle, generation: 1, state: 'ready', handleKind: provider === 'vercel' ? 'persistent-name' : 'volume-path' });
    if (provider === 'vercel') expect(shown.currentSessionId).toMatch(/\S/);
    else expect(shown.currentSessionId).toBeNull();
    expect(shown.lastUsedAt).toEqual(expect.any(Number));
    // Use moves it on.
    expect((await runFleet(['exec', 'ws', '--', 'sh', '-c', 'echo used > notes.txt'], env)).code).toBe(0);
    expect((await runtime()).lastUsedAt).toBeGreaterThan(shown.lastUsedAt!);
  });
});

describe('a Vercel workspace keeps its name across generations', () => {
  it('lost, replaced while holding the name, stopped and resumed: always fleet-<ws>, files kept, one sandbox', { timeout: 180_000 }, async () => {
    const { env, standin } = await providerTestEnv('vercel');
    await startFleetUp(env);
    const ok = async <T>(args: string[]): Promise<T> => {
      const result = await runFleet([...args, '--json'], env);
      expect(result.code, `fleet ${args.join(' ')}: ${result.stdout} ${result.stderr}`).toBe(0);
      return cliJson(result.stdout) as T;
    };
    const vercel = standinProvider(standin!);
    const signal = () => AbortSignal.timeout(30_000);
    const names = () => [...standin!.state.sandboxes.values()].map((s) => `${s.name}@g${s.tags?.['fleet-generation']}`);

    const g1 = await ok<Provisioned>(['provision', 'agent', '--wait']);
    expect(g1).toMatchObject({ handle: 'vercel:fleet-agent:g1', generation: 1, outcome: 'created-empty' });
    expect((await runFleet(['exec', 'agent', '--', 'sh', '-c', 'echo kept > notes.txt'], env)).code).toBe(0);
    await ok(['persist', 'agent', '--delete', '--reason', 'turn-end', '--wait']);

    // Generation 2: the sandbox is lost at the provider; the name is free and taken again.
    await vercel.destroy(g1.handle, signal());
    const g2 = await ok<Provisioned>(['provision', 'agent', '--wait']);
    expect(g2).toMatchObject({ handle: 'vercel:fleet-agent:g2', generation: 2, outcome: 'restored' });
    expect(names()).toEqual(['fleet-agent@g2']);

    // Generation 3: the sandbox is there but unusable (its ready marker lost): the new generation
    // takes the name over from it; nothing is left beside it.
    await vercel.clearReady(g2.handle, signal());
    const g3 = await ok<Provisioned>(['provision', 'agent', '--wait']);
    expect(g3).toMatchObject({ handle: 'vercel:fleet-agent:g3', generation: 3, outcome: 'restored' });
    expect(names()).toEqual(['fleet-agent@g3']);
    expect((await runFleet(['exec', 'agent', '--', 'cat', 'notes.txt'], env)).stdout).toBe('kept\n');
    // Generation 2's handle reaches nothing now, not even the sandbox under its old name.
    expect(await vercel.get(g2.handle, signal())).toBeNull();

    // Stopped (its session timed out, an auto-snapshot taken), then resumed by name: same
    // generation, a new session, and the snapshot it resumed from recorded.
    const before = (await ok<{ runtime: Runtime }>(['workspace', 'show', 'agent'])).runtime;
    expect(before.currentSnapshotId).toBeNull();
    await standin!.timeOutSession(g3.handle);
    const resumed = await ok<Provisioned>(['provision', 'agent', '--wait']);
    expect(resumed).toMatchObject({ handle: g3.handle, generation: 3, outcome: 'resumed' });
    const after = (await ok<{ runtime: Runtime }>(['workspace', 'show', 'agent'])).runtime;
    expect(after.currentSessionId).not.toBe(before.currentSessionId);
    expect(after.currentSessionId).toBe(standin!.sandbox(g3.handle)!.session.id);
    expect(after.currentSnapshotId).toMatch(/\S/);
    expect(after.currentSnapshotId).toBe(standin!.sandbox(g3.handle)!.currentSnapshotId);
    expect((await runFleet(['exec', 'agent', '--', 'cat', 'notes.txt'], env)).stdout).toBe('kept\n');
  });
});
