// Tree patches (docs/archive-format.md) through the front door, for each provider: a running
// `fleet up` and the CLI only (Vercel through the real SDK against the loopback stand-in). A turn
// that changes a few files of a large directory commits that directory as a patch of its previous
// tree; rollbacks, a rebuild from the archive and `fleet export` give the exact trees back, and
// `fleet verify` checks the patch against its id.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ArchiveStore } from '../../src/archive/archive-store.js';
import { loadConfig } from '../../src/config.js';
import { tempDir, testEnv } from '../helpers/fleet-env.js';
import { startLosableFleetUp } from '../helpers/fleet-up.js';
import { fleetJson, fleetShell, runFleet } from '../helpers/processes.js';
import { standinProvider } from '../helpers/vercel-standin/standin-provider.js';
import { providerUnderTest } from '../helpers/vercel-standin/standin-env.js';

const FIRST = 'mkdir -p big && for i in $(seq 1 60); do echo "first $i" > big/f-$i.txt; done && echo top > top.txt';
const SECOND = 'echo changed > big/f-7.txt && rm big/f-9.txt && echo added > big/new.txt';
const SHOW = 'cat big/f-7.txt big/f-8.txt; ls big | wc -l; test -e big/f-9.txt && echo f-9 || echo no-f-9';

describe('tree patches through fleet up and the CLI', () => {
  for (const provider of ['local', 'vercel'] as const) {
    it(`${provider}: a few changed files of a large directory commit a patch; rollback, rebuild and export give the exact trees back; verify is clean`, { timeout: 240_000 }, async () => {
      const { env: extra, standin } = await providerUnderTest(provider);
      const env = await testEnv({ ...extra, FLEET_HTTP_PORT: '0', FLEET_GC_SCHEDULE: 'idle=off,orphans=off' });
      const fleet = (args: string[]) => runFleet(args, env);
      const json = fleetJson(env);
      const sh = fleetShell(env, 'ws');
      const up = await startLosableFleetUp(env);

      const created = await json<{ handle: string }>(['provision', 'ws', '--wait']);
      await sh(FIRST);
      const first = (await json<{ result: { revision: string } }>(['persist', 'ws', '--delete', '--reason', 'turn-end', '--wait'])).result.revision;
      await sh(SECOND);
      const second = (await json<{ result: { revision: string } }>(['persist', 'ws', '--delete', '--reason', 'turn-end', '--wait'])).result.revision;

      // On disk: the second revision's big/ is a patch of the first's, a fraction of its size.
      const archive = new ArchiveStore(loadConfig(env).paths.archiveRoot);
      const bigOf = async (revision: string) => {
        const { root } = (await archive.readRecord('ws', revision))!;
        return ((await archive.objects.readTree(root)).find((n) => n.name.toString() === 'big') as { tree: string }).tree;
      };
      const patched = await archive.objects.loadTree(await bigOf(second));
      expect(patched.base).toBe(await bigOf(first));
      expect(patched.nodes).toHaveLength(60);

      const afterSecond = 'changed\nfirst 8\n60\nno-f-9\n';
      expect(await sh(SHOW)).toBe(afterSecond);
      // The sandbox is lost (Vercel: at the provider; local: its live tree with the host's process), and rebuilt from the patched revision.
      await up.lose(['ws'], standin ? () => standinProvider(standin).destroy(created.handle, AbortSignal.timeout(30_000)) : null);
      expect(await json<{ outcome: string; source: string }>(['provision', 'ws', '--wait'])).toMatchObject({ source: second });
      expect(await sh(SHOW)).toBe(afterSecond);
      await json(['rollback', 'ws', first, '--wait']);
      expect(await sh(SHOW)).toBe('first 7\nfirst 8\n60\nf-9\n');
      await json(['rollback', 'ws', second, '--wait']);
      expect(await sh(SHOW)).toBe(afterSecond);

      const out = path.join(await tempDir('patch-export'), 'tree');
      const exported = await fleet(['export', 'ws', '--revision', second, '--to', out]);
      expect(exported.code, exported.stderr).toBe(0);
      expect((await readdir(path.join(out, 'big'))).length).toBe(60);
      expect(await readFile(path.join(out, 'big', 'f-7.txt'), 'utf8')).toBe('changed\n');
      expect(await readFile(path.join(out, 'big', 'new.txt'), 'utf8')).toBe('added\n');

      const verify = await fleet(['verify', 'ws']);
      expect(verify.code, verify.stdout + verify.stderr).toBe(0);
    });
  }
});
