// Upgrading workspaces to a new base version as an operator does (a running `fleet up` and the
// CLI), for the local provider and for Vercel (the real SDK against the loopback stand-in): ten
// workspaces move to the new version (migration run, smoke-checked, persisted, templateVersion
// recorded); one whose migration fails half-way is rolled back to its tree before the upgrade and
// stays on its old version, listed; running the sweep again touches only that one.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/fleet-env.js';
import { providerTestEnv, startFleetUp } from '../helpers/fleet-up.js';
import { cliJson, runFleet } from '../helpers/processes.js';

interface Upgrade {
  readonly to: string;
  readonly upgraded: { workspaceId: string; from: string; to: string }[];
  readonly current: string[];
  readonly failed: { workspaceId: string; from: string; error: string; rolledBackTo: string | null; failedRevision: string | null }[];
}

async function checkUpgrade(env: Record<string, string>) {
  await startFleetUp(env);
  const ok = async (args: string[]) => {
    const result = await runFleet([...args, '--json'], env);
    expect(result.code, `fleet ${args.join(' ')}: ${result.stdout} ${result.stderr}`).toBe(0);
    return cliJson(result.stdout);
  };
  const dir = await tempDir('upgrade');
  const manifest = async (name: string, body: Record<string, unknown>) => {
    const file = path.join(dir, `${name}.json`);
    await writeFile(file, JSON.stringify({ schemaVersion: 1, name: 'app-base', runtime: 'node22', ...body }));
    return file;
  };
  const v1 = await ok(['bake', await manifest('v1', { setup: ['echo 1 > base-version'], smoke: ['test -f base-version'] }), '--activate', '--wait']);
  const ids = Array.from({ length: 11 }, (_, i) => `up-${String(i).padStart(2, '0')}`);
  for (const id of ids) await ok(['provision', id, '--wait']);
  // The last one's tree holds what makes the migration fail after its first half.
  expect((await runFleet(['exec', ids[10]!, '--', 'sh', '-c', 'touch blocker && echo mine > notes.txt'], env)).code).toBe(0);

  const v2 = await ok(['bake', await manifest('v2', { setup: ['echo 2 > base-version'], smoke: ['grep -qx 2 base-version'], migrate: ['echo 2 > base-version', 'test ! -f blocker'] }), '--wait']);
  expect(v2.version).not.toBe(v1.version);

  const first = await runFleet(['workspace', 'upgrade', '--all', '--to', v2.version, '--json'], env);
  expect(first.code, first.stdout + first.stderr).toBe(1);
  // The sweep ran: the answer is data (ok), and the exit code says one workspace failed.
  const result = cliJson(first.stdout) as Upgrade;
  expect(result.upgraded.map((u) => u.workspaceId).sort()).toEqual(ids.slice(0, 10));
  expect(result.upgraded.every((u) => u.from === v1.version && u.to === v2.version)).toBe(true);
  expect(result.failed).toEqual([expect.objectContaining({ workspaceId: ids[10], from: v1.version, rolledBackTo: expect.any(String), failedRevision: expect.any(String) })]);
  // The half-migrated tree is kept in history, not lost.
  expect(result.failed[0]!.failedRevision).not.toBe(result.failed[0]!.rolledBackTo);
  expect(result.failed[0]!.error).toMatch(/^UpgradeFailed: migration command 2 failed \(exit 1\): test ! -f blocker/);

  // Upgraded: the migrated tree and the recorded version; a revision with reason upgrade holds it.
  for (const id of [ids[0]!, ids[9]!]) {
    expect((await runFleet(['exec', id, '--', 'cat', 'base-version'], env)).stdout).toBe('2\n');
    expect((await ok(['workspace', 'show', id])).runtime.templateVersion).toBe(v2.version);
  }
  // The failed one: its tree as it was before the upgrade (the first migration command undone), its version unchanged.
  expect((await runFleet(['exec', ids[10]!, '--', 'sh', '-c', 'cat base-version notes.txt'], env)).stdout).toBe('1\nmine\n');
  expect((await ok(['workspace', 'show', ids[10]!])).runtime.templateVersion).toBe(v1.version);

  // Resumable: again, only the failed one is tried (and fails again); the rest are current.
  const again = await runFleet(['workspace', 'upgrade', '--all', '--to', v2.version, '--json'], env);
  expect(again.code).toBe(1);
  const data = cliJson(again.stdout) as Upgrade;
  expect({ upgraded: data.upgraded.length, current: data.current.length, failed: data.failed.map((f) => f.workspaceId) }).toEqual({ upgraded: 0, current: 10, failed: [ids[10]] });
}

describe.each(['local', 'vercel'] as const)('fleet workspace upgrade (%s)', (provider) => {
  it('moves ten workspaces, rolls back and keeps the failing one on its version, and resumes', { timeout: 400_000 }, async () => {
    await checkUpgrade((await providerTestEnv(provider)).env);
  });
});
