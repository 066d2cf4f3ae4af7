/**
 * `npm run demo`: the whole system in one command, against `fleet up` with an embedded Redis in a
 * throw-away home directory. Bakes a base from examples/base-manifest.json, provisions three
 * workspaces from it, writes files, persists, kills a sandbox, re-provisions it (files restored),
 * shows history and a rollback, runs GC as a dry run, and ends with a summary table.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const FLEET = path.join(ROOT, 'bin', 'fleet.js');
const say = (line: string) => process.stdout.write(`${line}\n`);
const step = (title: string) => say(`\n== ${title}`);

async function main(): Promise<number> {
  const home = process.env.DEMO_HOME ?? (await mkdtemp(path.join(tmpdir(), 'fleet-demo-')));
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/root',
    FLEET_HOME: home,
    FLEET_LOG_LEVEL: 'warn',
    FLEET_HTTP_PORT: process.env.FLEET_HTTP_PORT ?? '0',
    FLEET_ADMIN_PASSWORD: process.env.FLEET_ADMIN_PASSWORD ?? 'demo-password',
  };
  // Runs `fleet <args> --json` and returns the parsed output (throws with stderr on failure).
  const fleet = (args: string[], json = true): unknown => {
    const result = spawnSync(process.execPath, [FLEET, ...args, ...(json ? ['--json'] : [])], { env, encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`fleet ${args.join(' ')} failed (${result.status}): ${result.stderr.trim()}`);
    return json ? (JSON.parse(result.stdout) as { data: unknown }).data : result.stdout;
  };

  step(`fleet up (embedded Redis, home ${home})`);
  const up = spawn(process.execPath, [FLEET, 'up'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  let banner = '';
  await new Promise<void>((resolve, reject) => {
    up.stdout.on('data', (chunk: Buffer) => {
      banner += chunk.toString();
      if (/workers\s/.test(banner) && (/web\s/.test(banner) || !banner.includes('web'))) setTimeout(resolve, 200);
    });
    up.once('exit', (code) => reject(new Error(`fleet up exited (${code})`)));
  });
  say(banner.trim());
  const dashboard = /web\s+(http:\/\/\S+)/.exec(banner)?.[1];

  try {
    step('bake a base snapshot from examples/base-manifest.json');
    const baked = fleet(['bake', path.join(ROOT, 'examples', 'base-manifest.json'), '--activate', '--wait']) as { snapshotId: string; version: string };
    say(`baked ${baked.version} → ${baked.snapshotId} (active)`);

    step('provision three workspaces');
    const names = ['alice', 'bob', 'carol'];
    const provisioned = names.map((ws) => fleet(['provision', ws, '--wait']) as { workspaceId: string; outcome: string; generation: number; handle: string });
    for (const p of provisioned) say(`${p.workspaceId}: ${p.outcome} → ${p.handle}`);

    step('run commands that write files, then persist (turn end)');
    for (const ws of names) {
      fleet(['exec', ws, '--', 'sh', '-c', `echo "notes of ${ws}" > notes.md && mkdir -p work && date +%s > work/started`], false);
      const persisted = fleet(['persist', ws, '--delete', '--reason', 'turn-end', '--wait']) as { result: { revision: string; files: number } };
      say(`${ws}: revision ${persisted.result.revision} (${persisted.result.files} files)`);
    }
    fleet(['exec', 'alice', '--', 'sh', '-c', 'echo "a second draft" > notes.md'], false);
    const second = fleet(['persist', 'alice', '--delete', '--reason', 'turn-end', '--wait']) as { result: { revision: string } };

    step("kill alice's sandbox (its live tree disappears)");
    await rm(path.join(home, 'live', 'alice'), { recursive: true, force: true });
    const back = fleet(['provision', 'alice', '--wait']) as { outcome: string; source: string; generation: number };
    say(`alice: ${back.outcome} from ${back.source} (generation ${back.generation})`);
    const restoredNotes = String(fleet(['exec', 'alice', '--', 'cat', 'notes.md'], false)).trim();
    say(`alice/notes.md after restore: "${restoredNotes}"`);

    step('history and a rollback');
    const history = fleet(['history', 'alice']) as { revisions: { revision: string; reason: string; current: boolean }[] };
    for (const r of history.revisions) say(`  ${r.revision}  ${r.reason}${r.current ? '  (current)' : ''}`);
    const first = history.revisions.find((r) => r.revision !== second.result.revision && r.reason === 'turn-end')!;
    const rolled = fleet(['rollback', 'alice', first.revision, '--wait']) as { revision: string; restoredFrom: string };
    const afterRollback = String(fleet(['exec', 'alice', '--', 'cat', 'notes.md'], false)).trim();
    say(`rolled back to ${rolled.restoredFrom} as new revision ${rolled.revision}; notes.md: "${afterRollback}"`);

    step('GC dry run');
    const gc = fleet(['gc', '--dry-run']) as { results: { kind: string; count: number; bytes: number }[] };
    for (const r of gc.results) say(`  ${r.kind.padEnd(10)} would remove ${r.count} (${r.bytes} bytes)`);

    step('summary');
    const status = fleet(['status']) as { queues: Record<string, { completed: number; failed: number }>; workers: number; maxPersistLagMs: number };
    const rows = names.map((ws) => {
      const view = fleet(['workspace', 'show', ws]) as { generation: number; revisions: number; runtime: { outcome: string } | null; currentRevision: string };
      return [ws, String(view.generation), view.runtime?.outcome ?? '-', String(view.revisions), view.currentRevision];
    });
    const header = ['workspace', 'generation', 'last outcome', 'revisions', 'current revision'];
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
    for (const row of [header, ...rows]) say(row.map((cell, i) => cell.padEnd(widths[i]!)).join('  '));
    say(`restored files: alice/notes.md = "${restoredNotes}" (${restoredNotes === 'a second draft' ? 'restored' : 'NOT restored'})`);
    say(`jobs completed: ${Object.values(status.queues).reduce((s, q) => s + q.completed, 0)}, failed: ${Object.values(status.queues).reduce((s, q) => s + q.failed, 0)}, workers: ${status.workers}, max persist lag: ${status.maxPersistLagMs} ms`);
    say(dashboard ? `dashboard: ${dashboard}/admin/queues (user admin, password ${env.FLEET_ADMIN_PASSWORD})` : 'dashboard: run `fleet up` with the web surface to open Bull Board');
    return restoredNotes === 'a second draft' && afterRollback === 'notes of alice' ? 0 : 1;
  } finally {
    const exited = new Promise((resolve) => up.once('exit', resolve));
    up.kill('SIGTERM');
    await exited;
    if (!process.env.DEMO_HOME) await rm(home, { recursive: true, force: true });
  }
}

process.exitCode = await main();
