// A Vercel persist transfers only the change (issue 20, item 10): the real @vercel/sandbox SDK
// against the loopback stand-in (its commands really run), archive format 2. Every revision is
// compared with the sandbox's tree entry by entry (names as bytes, content digests, modes, mtimes).
import { lstat, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { lookupPath } from '../../src/archive/revision-reader.js';
import { loadConfig } from '../../src/config.js';
import { removeTree } from '../../src/tree/remove-tree.js';
import { testClient, testWorkers } from '../helpers/fleet-harness.js';
import { liveFacts, revisionFacts } from '../helpers/revision-facts.js';
import { countRoute, vercelWorkspace, type VercelWorkspace } from '../helpers/vercel-workspace.js';

const INITIAL_TREE = [
  'mkdir -p src/lib docs "empty dir" keep/sub',
  'for i in $(seq 1 40); do printf "file $i\\n" > src/lib/f$i.txt; done',
  "printf nl > \"$(printf 'new\\nline')\"",
  "printf bs > 'back\\slash'",
  "printf bad > \"$(printf 'bad\\377name')\"",
  'printf dash > ./-rf',
  'printf tool > tool.sh && chmod 755 tool.sh',
  'printf secret > docs/private && chmod 600 docs/private',
  'chmod 750 keep',
  'ln -s src/lib/f1.txt link-rel && ln -s /etc/passwd link-abs && ln -s ../../nowhere link-dangling',
  'mkfifo pipe',
  'printf x > keep/sub/a && printf y > keep/sub/b',
].join(' && ');
// 40 in src/lib, four odd names, tool.sh, docs/private, keep/sub/{a,b}.
const INITIAL_FILES = 48;

// A persist that may take again files written in the last moments before the previous one (the
// racily-clean rule); after it, an unchanged tree must move nothing but the listing.
async function settle(ws: VercelWorkspace): Promise<void> {
  const { result } = await ws.persist();
  expect(result.unchanged).toBe(true);
}

// Asserts a persist moved only the listing (and read the ready marker).
function expectListingOnly({ result, requests }: Awaited<ReturnType<VercelWorkspace['persist']>>): void {
  expect(result).toMatchObject({ unchanged: true, transferredFiles: 0 });
  expect(countRoute(requests, 'writeFiles')).toBe(0);
  expect(countRoute(requests, 'readFile')).toBe(2);
}

describe('Vercel persist moves only the change (stand-in)', () => {
  it('archives exactly the sandbox tree; then only changed files cross: deletions, renames, mode changes, symlinks, type changes, a rewrite with its mtime put back', { timeout: 120_000 }, async () => {
    const ws = await vercelWorkspace();
    await ws.sh(INITIAL_TREE);
    const first = await ws.persist();
    expect(first.result).toMatchObject({ unchanged: false, transferredFiles: INITIAL_FILES });
    await ws.expectArchived();
    await settle(ws);
    expectListingOnly(await ws.persist());

    await ws.sh(
      [
        'rm src/lib/f2.txt',
        'mv src/lib/f3.txt src/lib/f3-renamed.txt',
        'chmod 700 tool.sh',
        'rm link-rel && ln -s src/lib/f4.txt link-rel',
        'rm -rf keep/sub && chmod 755 keep',
        'printf newfile > docs/new.txt',
        'mkdir -p fresh/deeper && printf deep > fresh/deeper/x',
        // Same size, mtime put back: only its ctime tells.
        'old=$(stat -c %y src/lib/f5.txt) && printf "FILE 5\\n" > src/lib/f5.txt && touch -d "$old" src/lib/f5.txt',
        'rm docs/private && mkdir docs/private && printf inner > docs/private/inner',
        'rmdir "empty dir" && printf now-a-file > "empty dir"',
        'rm pipe && mkfifo -m 600 pipe',
      ].join(' && '),
    );
    const changed = await ws.persist();
    // f3-renamed, tool.sh (its ctime moved), docs/new.txt, fresh/deeper/x, f5, docs/private/inner, "empty dir".
    expect(changed.result).toMatchObject({ unchanged: false, transferredFiles: 7 });
    expect(countRoute(changed.requests, 'writeFiles')).toBe(1);
    await ws.expectArchived();
    expect((await ws.sh('cat src/lib/f5.txt'))).toBe('FILE 5\n');

    await settle(ws);
    expectListingOnly(await ws.persist());
    await ws.expectArchived();
    // No copy of the tree on the host: only the index of the versions the revision holds, private to the fleet.
    expect(await lstat(ws.mirror.tree).catch(() => null)).toBeNull();
    expect((await stat(ws.mirror.listedIndex)).mode & 0o777).toBe(0o600);
    expect((await stat(ws.mirror.dir)).mode & 0o777).toBe(0o700);
    expect((await stat(ws.h.config.paths.vercelMirrorRoot)).mode & 0o777).toBe(0o700);
    // No transfer file stays behind in the sandbox.
    expect(await ws.sh('ls -A ../.fleet')).toBe('ready.json\n');
  });

  it('the index is only a hint: damaged, stale, another incarnation\'s or lost, it costs transfers, never content; a persist that died after the listing is completed by the next', { timeout: 120_000 }, async () => {
    const ws = await vercelWorkspace();
    await ws.sh('mkdir -p src sub && for i in $(seq 1 30); do printf "content $i\\n" > src/f$i.txt; done && printf a > sub/a && printf b > sub/b && ln -s src/f1.txt link');
    await ws.persist();
    await settle(ws);
    type IndexFile = { sandbox: string; revision: string; files: [string, ...unknown[]][] };
    const readIndex = async () => JSON.parse(await readFile(ws.mirror.listedIndex, 'utf8')) as IndexFile;
    const writeIndex = (index: IndexFile) => writeFile(ws.mirror.listedIndex, JSON.stringify(index));

    // A row that names another object than the revision has at that path: not believed, that file crosses again.
    const index = await readIndex();
    const row = index.files.find(([key]) => key === 'src/f1.txt')!;
    const other = index.files.find(([key]) => key === 'src/f2.txt')!;
    row[7] = other[7];
    await writeIndex(index);
    expect((await ws.persist()).result).toMatchObject({ unchanged: true, transferredFiles: 1 });
    await ws.expectArchived();

    // Unreadable, another revision's, another incarnation's, or gone: the seed check against the
    // revision takes every file the sandbox lists as the revision has it; nothing crosses.
    await writeFile(ws.mirror.listedIndex, '{"v":1,"files":[["src/f1.txt"');
    expect((await ws.persist()).result).toMatchObject({ unchanged: true, transferredFiles: 0, seededFiles: 32 });
    await writeIndex({ ...(await readIndex()), revision: 'r-another' });
    expect((await ws.persist()).result).toMatchObject({ unchanged: true, transferredFiles: 0, seededFiles: 32 });
    await writeIndex({ ...(await readIndex()), sandbox: 'vercel:fleet-other:g1' });
    expect((await ws.persist()).result).toMatchObject({ unchanged: true, transferredFiles: 0, seededFiles: 32 });
    await rm(ws.mirror.dir, { recursive: true });
    expect((await ws.persist()).result).toMatchObject({ unchanged: true, transferredFiles: 0, seededFiles: 32 });
    await ws.expectArchived();
    expectListingOnly(await ws.persist());

    // A persist that dies after the listing (the archive read fails, the SDK's three attempts
    // included): nothing is committed, and the next one takes the change.
    await ws.sh('rm -rf sub && printf new > src/new.txt && printf changed > src/f7.txt');
    void ws.standin.nextRequest('writeFiles').then(() => ws.standin.faults.add('readFile', { kind: 'drop' }, 3));
    await expect(ws.persist()).rejects.toMatchObject({ classification: 'busy' });
    const resumed = await ws.persist();
    expect(resumed.result).toMatchObject({ unchanged: false, transferredFiles: 2, deletedFiles: 3 });
    await ws.expectArchived();
    await settle(ws);
    expectListingOnly(await ws.persist());
  });

  it('a new incarnation restored from the archive, on a host that lost everything: what it lists as the revision has it is taken from the revision, an object the archive lost crosses again, only what changed crosses', { timeout: 120_000 }, async () => {
    const ws = await vercelWorkspace('vd-seed');
    await testWorkers(loadConfig({ ...ws.h.env, FLEET_HOST_ID: 'vercel' }), ['persist']);
    await testWorkers(ws.h.config, ['provision']);
    const client = testClient(ws.h.config);
    await ws.sh('mkdir -p app/deep && for i in $(seq 1 60); do printf "v1 $i\\n" > app/m$i.js; done && printf x > app/deep/x && chmod 700 app/m1.js');
    const first = (await client.persist({ workspaceId: ws.workspaceId, generation: 1, delete: true, reason: 'turn-end' }, { wait: true, timeoutMs: 60_000 })).result!;
    expect(first).toMatchObject({ unchanged: false, transferredFiles: 61 });
    // The sandbox and the host's disk are lost; a provision restores the current revision.
    await ws.vercel.destroy(ws.handle, AbortSignal.timeout(60_000));
    await removeTree(ws.h.config.paths.vercelMirrorRoot);
    const restored = (await client.provision({ workspaceId: ws.workspaceId, provider: 'vercel' }, { wait: true, timeoutMs: 60_000 })).result!;
    expect(restored).toMatchObject({ outcome: 'restored', generation: 2 });
    const sh = async (script: string) => expect((await ws.vercel.exec(restored.handle, { cmd: ['sh', '-c', script], timeoutMs: 30_000, signal: AbortSignal.timeout(30_000) })).exitCode).toBe(0);
    // The agent goes on: a rewrite, a new file, a file with its mtime moved, a deletion.
    await sh('printf "v2 2\\n" > app/m2.js && printf new > app/new.js && touch -d "2001-01-01" app/m3.js && rm app/m4.js');
    // One object the archive lost: that file crosses too (and its object is stored again).
    const { archive } = ws.h.services;
    const record = (await archive.readRecord(ws.workspaceId, (await archive.current(ws.workspaceId))!))!;
    const lost = (await lookupPath(archive.objects, record.root, Buffer.from('app/m10.js')))!;
    if (lost.type !== 'f') throw new Error('app/m10.js is not a file in the revision');
    await rm(archive.objects.objectPath(lost.object));
    const from = ws.standin.requests.length;
    const after = (await client.persist({ workspaceId: ws.workspaceId, generation: 2, delete: true, reason: 'turn-end' }, { wait: true, timeoutMs: 60_000 })).result!;
    // m2, new.js, m3 and m10 cross; the other 57 files come from the archive.
    expect(after).toMatchObject({ unchanged: false, transferredFiles: 4, seededFiles: 57, deletedFiles: 1 });
    expect(await readFile(archive.objects.objectPath(lost.object), 'utf8')).toBe('v1 10\n');
    expect(countRoute(ws.standin.requests.slice(from), 'writeFiles')).toBe(1);
    // Exactly the sandbox's tree (a restored file's time is the one its revision recorded, which
    // Node's double conversion may have moved by a microsecond on the way: contents and modes here).
    const withoutTimes = (facts: Record<string, string>) => Object.fromEntries(Object.entries(facts).map(([k, v]) => [k, v.replace(/^([fp] .*) \d+$/, '$1')]));
    expect(withoutTimes(await revisionFacts(ws.h.services.archive, ws.workspaceId))).toEqual(withoutTimes(await liveFacts(ws.standin.sandboxDir(restored.handle, '/vercel/sandbox/workspace'))));
  });

  it('through the front door: persist jobs on persist@vercel served by in-process workers', { timeout: 120_000 }, async () => {
    const ws = await vercelWorkspace('vd-door');
    // Vercel workspaces live on host `vercel` (`persist@vercel`); fleet up serving it is issue 19.12.
    await testWorkers(loadConfig({ ...ws.h.env, FLEET_HOST_ID: 'vercel' }), ['persist']);
    const client = testClient(ws.h.config);
    const persist = async () => (await client.persist({ workspaceId: ws.workspaceId, generation: 1, delete: true, reason: 'turn-end' }, { wait: true, timeoutMs: 60_000 })).result!;
    await ws.sh('mkdir -p app && for i in $(seq 1 20); do printf "v1 $i\\n" > app/m$i.js; done');
    expect(await persist()).toMatchObject({ unchanged: false, transferredFiles: 20 });
    await ws.sh('printf "v2 3\\n" > app/m3.js && rm app/m4.js');
    expect(await persist()).toMatchObject({ unchanged: false, transferredFiles: 1, deletedFiles: 1 });
    await ws.expectArchived();
    await persist();
    const quiet = await persist();
    expect(quiet).toMatchObject({ unchanged: true, transferredFiles: 0 });
    expect(quiet.transferredBytes).toBeLessThan(2_000);
  });
});
