// GET /v1/events through a running `fleet up`, for each provider (local, and Vercel through the
// real SDK against the loopback stand-in): an app pod learns that its workspace was provisioned,
// that its turn was persisted (with the revision), that a job failed for good, and that the idle
// workspace was reaped, without polling; a reconnect with Last-Event-ID picks up where it left.
import { describe, expect, it } from 'vitest';
import { readEvents } from '../helpers/event-stream.js';
import { testEnv } from '../helpers/fleet-env.js';
import { runFleet, startFleet } from '../helpers/processes.js';
import { providerEnv } from '../helpers/vercel-standin/standin-env.js';
import { waitFor } from '../helpers/wait.js';

for (const provider of ['local', 'vercel'] as const) {
  describe(`events through fleet up (${provider})`, () => {
    it('provisioned, persisted with its revision, a final failure and the reap arrive as SSE; Last-Event-ID resumes', { timeout: 180_000 }, async () => {
      const extra = await providerEnv(provider);
      const env = await testEnv({ ...extra, FLEET_HTTP_PORT: '0', FLEET_IDLE_TTL_MS: '1000', FLEET_GC_SCHEDULE: 'idle=off,orphans=off' });
      const up = startFleet(['up'], env);
      await up.waitForOutput(/web\s+http:\/\/127\.0\.0\.1:\d+/, 60_000);
      const web = /web\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(up.stdout())![1]!;
      const post = async (p: string, body: unknown) => (await fetch(`${web}/v1/workspaces/ws-e${p}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json() as Promise<Record<string, any>>;

      const stream = readEvents(await fetch(`${web}/v1/events?workspaceId=ws-e`), { sse: true });
      const provisioned = await post('/provision?wait=true', { provider });
      await fetch(`${web}/v1/workspaces/ws-e/files/notes.md`, { method: 'PUT', body: 'turn one\n' });
      const persisted = await post('/persist?wait=true', { generation: provisioned.result.generation, delete: true, reason: 'turn-end', turnId: 'turn-1' });
      const rollback = await post('/rollback', { revision: 'r20200101T000000000Z-g1-aaaaaa' });

      const first = await stream.until((e) => e.type === 'provisioned');
      expect(first).toMatchObject({ workspaceId: 'ws-e', provider, generation: provisioned.result.generation, handle: provisioned.result.handle });
      expect(await stream.until((e) => e.type === 'persisted' && e.reason === 'turn-end')).toMatchObject({ revision: persisted.result.revision, turnId: 'turn-1', files: 1 });
      expect(await stream.until((e) => e.type === 'failed')).toMatchObject({ jobId: rollback.jobId, code: 'RevisionNotFound', retryable: false });
      await stream.cancel();

      // Reaped while nobody listens; a reconnect after the last event seen still gets it.
      const lastSeen = stream.seen.at(-1)!.id as string;
      // Idle once a second without activity: the reaper is run until it stopped the workspace.
      await waitFor('ws-e reaped', async () => {
        expect((await runFleet(['gc', '--kind', 'idle', '--json'], env)).code).toBe(0);
        const view = (await (await fetch(`${web}/v1/workspaces/ws-e`)).json()) as { runtime?: { state?: string } };
        return view.runtime?.state === 'stopped' ? true : undefined;
      }, 60_000);
      const resumed = readEvents(await fetch(`${web}/v1/events?workspaceId=ws-e`, { headers: { 'last-event-id': lastSeen } }), { sse: true });
      expect(await resumed.until((e) => e.type === 'reaped')).toMatchObject({ workspaceId: 'ws-e', generation: provisioned.result.generation });
      expect(resumed.seen.some((e) => e.id === lastSeen || e.type === 'provisioned')).toBe(false);
      await resumed.cancel();
    });
  });
}
