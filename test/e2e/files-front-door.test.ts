// Workspace files through the front doors of a running `fleet up`, for each provider (local, and
// Vercel through the real SDK against the loopback stand-in): HTTP PUT/GET/tree/DELETE warm, the
// CLI `fleet files`, diff, history and restore of kept revisions (warm), then cold after the
// sandbox is gone, a cold write and a cold restore, both restored by the first provision.
import { describe, expect, it } from 'vitest';
import { addCleanup } from '../helpers/cleanup.js';
import { testEnv } from '../helpers/fleet-env.js';
import { runFleet, startFleet, cliJson } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';
import { standinEnv } from '../helpers/vercel-standin/standin-env.js';
import { standinProvider } from '../helpers/vercel-standin/standin-provider.js';
import { VercelStandin } from '../helpers/vercel-standin/vercel-standin.js';

async function fleetUp(env: Record<string, string>) {
  const up = startFleet(['up'], env);
  await up.waitForOutput(/web\s+http:\/\/127\.0\.0\.1:\d+/, 60_000);
  return { up, web: /web\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(up.stdout())![1]! };
}

const json = async (r: Promise<Response>) => {
  const response = await r;
  return { status: response.status, body: (await response.json()) as Record<string, any> };
};

for (const provider of ['local', 'vercel'] as const) {
  describe(`workspace files through fleet up (${provider})`, () => {
    it('HTTP and CLI read, write, list and remove warm; diff, history and restore kept revisions warm and cold; after a reap (local) or a loss (vercel) the file answers; cold reads and writes are restored by the first provision', { timeout: 180_000 }, async () => {
      let destroy: (handle: string) => Promise<void>;
      let extra: Record<string, string> = {};
      if (provider === 'vercel') {
        const standin = await VercelStandin.start();
        addCleanup(() => standin.close());
        extra = standinEnv(standin);
        destroy = (handle) => standinProvider(standin).destroy(handle, AbortSignal.timeout(30_000));
      }
      const env = await testEnv({ ...extra, FLEET_HTTP_PORT: '0', FLEET_IDLE_TTL_MS: '1000', FLEET_GC_SCHEDULE: 'idle=off,orphans=off' });
      const { web } = await fleetUp(env);
      const fleet = (args: string[]) => runFleet(args, env);
      const at = (p: string) => `${web}/v1/workspaces/ws-f${p}`;

      const provisioned = await json(fetch(at('/provision?wait=true'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ provider }) }));
      expect(provisioned.status).toBe(200);
      const { handle, generation } = provisioned.body.result;
      const job = await json(fetch(`${web}/v1/jobs/${provisioned.body.queue}/${encodeURIComponent(provisioned.body.jobId)}`));
      expect(job).toMatchObject({ status: 200, body: { state: 'completed', result: { workspaceId: 'ws-f', generation }, failure: null } });
      if (provider === 'local') {
        // Reaped as an idle workspace is: a final persist, then the sandbox stopped (its files stay; the address names it).
        destroy = async () => {
          await waitFor('ws-f reaped', async () => {
            await fleet(['gc', '--kind', 'idle', '--json']);
            return (await json(fetch(at('')))).body.runtime?.state === 'stopped' ? true : undefined;
          });
        };
      }

      expect(await json(fetch(at('/files/src%2Fmain.py'), { method: 'PUT', body: 'print("hi")\n' }))).toMatchObject({ status: 200, body: { bytes: 12, source: { kind: 'live', generation } } });
      const read = await fetch(at('/files/src/main.py'));
      expect(read.headers.get('x-fleet-source')).toBe('live');
      expect(await read.text()).toBe('print("hi")\n');
      const ran = await json(fetch(at('/exec'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ cmd: ['sh', '-c', 'cat src/main.py && echo made > src/out.txt'] }) }));
      expect(ran.body).toMatchObject({ exitCode: 0, stdout: 'print("hi")\n' });
      const tree = await json(fetch(at('/tree?path=src')));
      expect(tree.body.entries.map((e: { path: string }) => e.path)).toEqual(['src/main.py', 'src/out.txt']);

      expect(await fleet(['files', 'put', 'ws-f', 'cli.txt', '--content', 'from the cli'])).toMatchObject({ code: 0 });
      expect(await fleet(['files', 'get', 'ws-f', 'cli.txt'])).toMatchObject({ code: 0, stdout: 'from the cli' });
      const ls = await fleet(['files', 'ls', 'ws-f', '--json']);
      expect(cliJson(ls.stdout).entries.map((e: { path: string }) => e.path)).toEqual(['cli.txt', 'src']);
      expect(await fleet(['files', 'rm', 'ws-f', 'src/out.txt'])).toMatchObject({ code: 0 });
      expect((await fetch(at('/files/src/out.txt'))).status).toBe(404);

      const persisted = await json(fetch(at('/persist?wait=true'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ generation, delete: true, reason: 'turn-end' }) }));
      expect(persisted.status).toBe(200);
      // Kept revisions, warm: a diff between two, the history of a path, and a file restored into the live sandbox.
      const post = (url: string, body: unknown) => json(fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }));
      const r1 = persisted.body.result.revision as string;
      expect((await json(fetch(at('/files/src%2Fmain.py'), { method: 'PUT', body: 'broken' }))).status).toBe(200);
      const r2 = (await post(at('/persist?wait=true'), { generation, delete: true, reason: 'turn-end' })).body.result.revision as string;
      const diff = await json(fetch(at(`/diff?from=${r1}`)));
      expect(diff).toMatchObject({ status: 200, body: { from: r1, to: r2, added: [], deleted: [], changed: [{ path: 'src/main.py', size: 6, previousSize: 12 }], truncated: false } });
      const history = await json(fetch(at('/files/src/main.py/history')));
      // Added in r1 or in an earlier checkpoint (the provider's schedule may persist before r1), changed in r2.
      const [changed, added, ...older] = history.body.revisions as { revision: string; change: string }[];
      expect(changed).toMatchObject({ revision: r2, change: 'changed' });
      expect(added).toMatchObject({ change: 'added' });
      expect(added!.revision <= r1).toBe(true);
      expect(older).toEqual([]);
      expect(await post(at('/files/src/main.py/restore'), { revision: r1 })).toMatchObject({ status: 200, body: { revision: r1, bytes: 12, source: { kind: 'live' } } });
      expect(await (await fetch(at('/files/src/main.py'))).text()).toBe('print("hi")\n');
      await destroy!(handle);
      // Vercel: the sandbox vanished at the provider; a read finds it gone and rebuilds it from the archive.
      // Local: the reaped sandbox is stopped; its tree is still the authority and answers.
      const again = await fetch(at('/files/cli.txt'));
      expect(await again.text()).toBe('from the cli');
      if (provider === 'vercel') expect(Number(again.headers.get('x-fleet-generation'))).toBeGreaterThan(generation);

      // Cold: a workspace with no incarnation is read from and written to the archive; its first provision restores the write.
      const cold = (p: string) => `${web}/v1/workspaces/ws-cold${p}`;
      expect(await json(fetch(cold('/files/seed%2Fplan.md'), { method: 'PUT', body: '# plan' }))).toMatchObject({ status: 200, body: { source: { kind: 'archive' } } });
      const coldRead = await fetch(cold('/files/seed/plan.md'));
      expect(coldRead.headers.get('x-fleet-source')).toBe('archive');
      expect(await coldRead.text()).toBe('# plan');
      const c1 = (await json(fetch(cold('/revisions')))).body.revisions[0].revision as string;
      expect(await fleet(['files', 'put', 'ws-cold', 'second.txt', '--content', 'two'])).toMatchObject({ code: 0 });
      // Cold restore: a new revision puts the file back as c1 held it; the diff from c1 shows only the other write.
      expect(await json(fetch(cold('/files/seed%2Fplan.md'), { method: 'PUT', body: '# broken plan' }))).toMatchObject({ status: 200, body: { source: { kind: 'archive' } } });
      const coldRestore = await json(fetch(cold('/files/seed/plan.md/restore'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ revision: c1 }) }));
      expect(coldRestore).toMatchObject({ status: 200, body: { revision: c1, bytes: 6, source: { kind: 'archive', revision: expect.any(String) } } });
      expect((await json(fetch(cold(`/diff?from=${c1}`)))).body).toMatchObject({ to: coldRestore.body.source.revision, added: [{ path: 'second.txt' }], changed: [], deleted: [] });
      expect((await json(fetch(cold('/files/seed/plan.md/history')))).body.revisions.map((r: { change: string; reason: string }) => `${r.change}:${r.reason}`)).toEqual(['changed:file-write', 'changed:file-write', 'added:file-write']);
      const first = await json(fetch(cold('/provision?wait=true'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ provider }) }));
      expect(first.body.result).toMatchObject({ outcome: 'restored' });
      expect(await fleet(['exec', 'ws-cold', '--', 'cat', 'seed/plan.md', 'second.txt'])).toMatchObject({ code: 0, stdout: '# plantwo' });
    });
  });
}
