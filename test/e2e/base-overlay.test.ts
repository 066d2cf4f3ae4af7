// A base's template overlay as an operator meets it (a running `fleet up` and the CLI), for the
// local provider and for Vercel (the real SDK against the loopback stand-in): every new workspace
// made from the base gets the overlay's files; a bake whose overlay is over
// FLEET_BASE_OVERLAY_MAX_BYTES fails; and a provision whose base's overlay is over the limit the
// provisioning process has fails as `error` (never ready) and keeps the sandbox's handle for debugging.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/fleet-env.js';
import { providerTestEnv, startFleetUp } from '../helpers/fleet-up.js';
import { killGroup, runFleet } from '../helpers/processes.js';

async function manifest(name: string, overlayBytes: number): Promise<string> {
  const file = path.join(await tempDir('base-overlay'), `${name}.json`);
  const content = `{"app":"${'x'.repeat(overlayBytes - 11)}"}\n`;
  await writeFile(file, JSON.stringify({ schemaVersion: 1, name, runtime: 'node22', setup: ['echo base > base.txt'], smoke: ['test -f base.txt'], overlay: [{ path: 'config/app.json', content }] }));
  return file;
}

async function checkOverlay(baseEnv: Record<string, string>) {
  const env = { ...baseEnv, FLEET_BASE_OVERLAY_MAX_BYTES: '4096' };
  const up = await startFleetUp(env);
  const run = async (e: Record<string, string>, args: string[]) => {
    const result = await runFleet([...args, '--json'], e);
    return { code: result.code, body: JSON.parse(result.stdout || '{}') as { ok: boolean; data?: any; error?: { code: string; message: string; context: Record<string, unknown> } }, stderr: result.stderr };
  };
  const ok = async (e: Record<string, string>, args: string[]) => {
    const result = await run(e, args);
    expect(result.code, `fleet ${args.join(' ')}: ${JSON.stringify(result.body)} ${result.stderr}`).toBe(0);
    return result.body.data;
  };

  // Baked with a 1,000-byte overlay; a new workspace gets it on top of the base.
  expect((await ok(env, ['bake', await manifest('with-overlay', 1_000), '--activate', '--wait'])).activated).toBe(true);
  expect(await ok(env, ['provision', 'ws-1', '--wait'])).toMatchObject({ outcome: 'created-from-base' });
  const read = await runFleet(['exec', 'ws-1', '--', 'sh', '-c', 'cat base.txt && wc -c < config/app.json'], env);
  expect(read.stdout).toBe('base\n1000\n');

  // A bake whose overlay is over the limit fails before anything is made.
  const tooBig = await run(env, ['bake', await manifest('big-overlay', 5_000), '--wait']);
  expect(tooBig.code).not.toBe(0);
  expect(tooBig.body.error).toMatchObject({ code: 'BakeFailed', context: { step: 'overlay', bytes: 5_000, limit: 4_096 } });

  // The fleet restarted with a smaller limit: the active base's overlay no longer fits.
  killGroup(up.child, 'SIGTERM');
  await up.exited;
  const smaller = { ...baseEnv, FLEET_BASE_OVERLAY_MAX_BYTES: '500' };
  await startFleetUp(smaller);
  const refused = await run(smaller, ['provision', 'ws-2', '--wait']);
  expect(refused.code).not.toBe(0);
  expect(refused.body.error?.code).toBe('OverlayFailed');
  expect(refused.body.error?.message).toMatch(/is 1000 bytes, over FLEET_BASE_OVERLAY_MAX_BYTES \(500\)/);
  const shown = await ok(smaller, ['workspace', 'show', 'ws-2']);
  expect(shown.runtime).toMatchObject({ state: 'error', handle: expect.any(String), error: expect.stringMatching(/^OverlayFailed: /) });
  // Never ready: no address was published, so nothing runs in it.
  expect((await run(smaller, ['exec', 'ws-2', '--', 'true'])).code).not.toBe(0);
  // ws-1 is untouched.
  expect((await runFleet(['exec', 'ws-1', '--', 'cat', 'base.txt'], smaller)).stdout).toBe('base\n');
}

describe.each(['local', 'vercel'] as const)('base template overlay (%s)', (provider) => {
  it('is written into new workspaces; over the limit it fails the bake, or the provision as error', { timeout: 240_000 }, async () => {
    await checkOverlay((await providerTestEnv(provider)).env);
  });
});
