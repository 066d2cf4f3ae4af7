// Packs of small objects (FLEET_ARCHIVE_PACKS=true; docs/archive-format.md, "Packs") through the
// front door, for each provider: a running `fleet up` and the CLI only (Vercel through the real
// SDK against the loopback stand-in). A first persist packs its small objects (local: the walk of
// the live tree; Vercel: the files the sandbox sends), past the few hundred a persist places as
// files before its writer thread runs; the sandbox is lost and rebuilt from the archive with every
// file exact; `fleet export`, the files API's cold read and `fleet verify` read them from the
// packs; the objects GC (a dry run) reports nothing of the workspace's packs to reclaim. Then most
// files are deleted and the first revision retired: the objects GC repacks the packs whose bytes
// are mostly unreachable (their reachable objects into new packs), the packs shrink, and the
// workspace still verifies and rebuilds exactly.
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EARLY_OBJECTS, WRITER_AFTER } from '../../src/archive/object-placer.js';
import { loadConfig } from '../../src/config.js';
import { tempDir, testEnv } from '../helpers/fleet-env.js';
import { startLosableFleetUp } from '../helpers/fleet-up.js';
import { backdate } from '../helpers/gc-objects.js';
import { fleetJson, fleetShell, runFleet } from '../helpers/processes.js';
import { standinProvider } from '../helpers/vercel-standin/standin-provider.js';
import { providerUnderTest } from '../helpers/vercel-standin/standin-env.js';

// Enough files that some go through the writer thread whatever the machine's load: it starts after
// WRITER_AFTER objects, and the persist places at most EARLY_OBJECTS more itself while it starts.
// Vercel's (whose stand-in sandbox writes and sends every file) fewer, for the CI's time.
const FILES = { local: 1_500, vercel: 700 } as const;
const AT_MOST_AS_FILES = WRITER_AFTER + EARLY_OBJECTS + 1; // and large.bin, over a pack's limit
const write = (files: number) => `mkdir -p src && for i in $(seq 1 ${files}); do echo "file $i of the first persist" > src/f-$i.txt; done && head -c 300000 /dev/zero | tr '\\0' x > large.bin`;
const show = (files: number) => `ls src | wc -l; cat src/f-1.txt src/f-${files}.txt; wc -c < large.bin`;

describe('packs through fleet up and the CLI', () => {
  for (const provider of ['local', 'vercel'] as const) {
    it(`${provider}: a first persist packs its objects; a rebuild, export, a cold read and verify read them back exactly; once most are deleted the GC repacks them`, { timeout: 300_000 }, async () => {
      const { env: extra, standin } = await providerUnderTest(provider);
      const env = await testEnv({ ...extra, FLEET_ARCHIVE_PACKS: 'true', FLEET_HTTP_PORT: '0', FLEET_GC_SCHEDULE: 'idle=off,orphans=off,retention=off,objects=off', FLEET_KEEP_REVISIONS: '1', FLEET_KEEP_REVISIONS_MIN_AGE_MS: '0' });
      const fleet = (args: string[]) => runFleet(args, env);
      const json = fleetJson(env);
      const sh = fleetShell(env, 'ws');
      const up = await startLosableFleetUp(env);

      const files = FILES[provider];
      const created = await json<{ handle: string }>(['provision', 'ws', '--wait']);
      await sh(write(files));
      const revision = (await json<{ result: { revision: string } }>(['persist', 'ws', '--delete', '--reason', 'turn-end', '--wait'])).result.revision;
      const shown = `${files}\nfile 1 of the first persist\nfile ${files} of the first persist\n300000\n`;
      expect(await sh(show(files))).toBe(shown);

      // On disk: packs with their indexes, and no more object files than the persist places before its thread runs.
      const store = path.join(loadConfig(env).paths.archiveRoot, '.store');
      const packs = await readdir(path.join(store, 'packs'));
      const indexes = packs.filter((f) => f.endsWith('.idx'));
      expect(indexes.length).toBeGreaterThan(0);
      expect(packs.filter((f) => f.endsWith('.pack')).length).toBe(indexes.length);
      let objectFiles = 0;
      for (const fanout of await readdir(path.join(store, 'objects'))) objectFiles += (await readdir(path.join(store, 'objects', fanout))).length;
      expect(objectFiles).toBeLessThanOrEqual(AT_MOST_AS_FILES);

      // The sandbox is lost (Vercel: at the provider; local: its live tree with the host's process) and rebuilt from the packed revision.
      await up.lose(['ws'], standin ? () => standinProvider(standin).destroy(created.handle, AbortSignal.timeout(30_000)) : null);
      const rebuilt = await json<{ source: string; handle: string }>(['provision', 'ws', '--wait']);
      expect(rebuilt).toMatchObject({ source: revision });
      expect(await sh(show(files))).toBe(shown);

      const out = path.join(await tempDir('packs-export'), 'tree');
      const exported = await fleet(['export', 'ws', '--revision', revision, '--to', out]);
      expect(exported.code, exported.stderr).toBe(0);
      expect((await readdir(path.join(out, 'src'))).length).toBe(files);
      expect(await readFile(path.join(out, 'src', 'f-277.txt'), 'utf8')).toBe('file 277 of the first persist\n');

      const cold = await fleet(['files', 'get', 'ws', 'src/f-290.txt', '--revision', revision]);
      expect(cold.code, cold.stderr).toBe(0);
      expect(cold.stdout).toBe('file 290 of the first persist\n');

      // Every tree and object re-hashed, the packed ones through their packs.
      const verify = await fleet(['verify', 'ws']);
      expect(verify.code, verify.stdout + verify.stderr).toBe(0);

      // The objects GC marks and sweeps a store with packs; everything is reachable or young.
      const gc = await fleet(['gc', '--kind', 'objects', '--dry-run', '--json']);
      expect(gc.code, gc.stderr).toBe(0);
      const results = (JSON.parse(gc.stdout) as { data: { results: { kind: string; items: unknown[] }[] } }).data.results;
      expect(results.find((r) => r.kind === 'objects')?.items).toEqual([]);

      // Four files in five deleted (all but every fifth: in whatever order the packs hold them, each loses about four in five);
      // the first revision retired, so their objects are unreachable; the store's files aged past the grace.
      await sh(`set --; for i in $(seq 1 ${files}); do if [ $((i % 5)) -ne 0 ]; then set -- "$@" src/f-$i.txt; fi; done; rm "$@"`);
      const second = (await json<{ result: { revision: string } }>(['persist', 'ws', '--delete', '--force', '--reason', 'turn-end', '--wait'])).result.revision;
      const retention = await fleet(['gc', '--kind', 'retention', '--json']);
      expect(retention.code, retention.stderr).toBe(0);
      expect(retention.stdout).toContain(revision);
      backdate(store);
      const packBytes = async () => {
        let total = 0;
        for (const name of await readdir(path.join(store, 'packs'))) total += (await stat(path.join(store, 'packs', name))).size;
        return total;
      };
      const before = await packBytes();
      const objects = await fleet(['gc', '--kind', 'objects', '--json']);
      expect(objects.code, objects.stderr).toBe(0);
      // The run's report (its items list is cut short in the output): packs repacked, none left damaged.
      const report = (JSON.parse(objects.stdout) as { data: { results: { kind: string; report: Record<string, number> }[] } }).data.results.find((r) => r.kind === 'objects')!.report;
      expect(report.repackedPacks).toBeGreaterThan(0);
      expect(report.keptDamaged).toBe(0);
      expect(await packBytes()).toBeLessThan(before / 2);
      const verified = await fleet(['verify', 'ws']);
      expect(verified.code, verified.stdout + verified.stderr).toBe(0);
      const left = `${files / 5}\nfile ${files} of the first persist\n300000\n`;
      const showLeft = `ls src | wc -l; cat src/f-${files}.txt; wc -c < large.bin`;
      expect(await sh(showLeft)).toBe(left);
      await up.lose(['ws'], standin ? () => standinProvider(standin).destroy(rebuilt.handle, AbortSignal.timeout(30_000)) : null);
      expect(await json<{ source: string }>(['provision', 'ws', '--wait'])).toMatchObject({ source: second });
      expect(await sh(showLeft)).toBe(left);
    });
  }
});
