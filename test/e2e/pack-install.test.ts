// The package as an app installs it: `npm pack`, the tarball unpacked as a dependency of a fresh
// project, imported by its public name against a running `fleet up`: provision and persist with
// waits, a worker's failure back as the exported error class, internals not reachable, and the
// types resolve for a TypeScript consumer.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { addCleanup } from '../helpers/cleanup.js';
import { testEnv } from '../helpers/fleet-env.js';
import { ROOT, startFleet } from '../helpers/processes.js';
import { removeTree } from '../../src/tree/remove-tree.js';

const run = promisify(execFile);

const CONSUMER = `
import { connectFleetClient, StaleGenerationError } from 'sandbox-fleet';
const fleet = await connectFleetClient();
try {
  const provisioned = await fleet.provision({ workspaceId: 'ws-pack' }, { wait: true });
  const persisted = await fleet.persist({ workspaceId: 'ws-pack', generation: provisioned.result.generation, delete: true, reason: 'turn-end' }, { wait: true });
  let stale = null;
  try {
    await fleet.persist({ workspaceId: 'ws-pack', generation: provisioned.result.generation + 5, reason: 'turn-end' }, { wait: true });
  } catch (error) {
    stale = { instance: error instanceof StaleGenerationError, code: error.code, retryable: error.retryable };
  }
  let internal = null;
  try {
    await import('sandbox-fleet/dist/app/services.js');
  } catch (error) {
    internal = error.code;
  }
  console.log(JSON.stringify({ generation: provisioned.result.generation, persisted: persisted.result.workspaceId, stale, internal }));
} finally {
  await fleet.close();
}
`;

const TS_CONSUMER = `
import { createFleetClient, loadConfig, StaleGenerationError, type PersistResult, type FleetClient } from 'sandbox-fleet';
const client: FleetClient = createFleetClient({ config: loadConfig({}) });
const files: number = ({} as PersistResult).files;
export const check = [client, files, StaleGenerationError];
`;

describe('the packed package', () => {
  it('installs from npm pack, imports by name, provisions and persists, revives worker failures as its error classes, hides internals', { timeout: 180_000 }, async () => {
    // Below the repository's node_modules, so the unpacked package resolves its dependencies there.
    const project = await mkdtemp(path.join(ROOT, 'node_modules', '.pack-test-'));
    addCleanup(() => removeTree(project));
    const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', project], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 });
    const [{ filename, files }] = JSON.parse(stdout) as [{ filename: string; files: { path: string }[] }];
    const shipped = new Set(files.map((f) => f.path));
    expect(['dist/index.js', 'dist/index.d.ts', 'bin/fleet.js', 'README.md'].filter((f) => !shipped.has(f))).toEqual([]);
    expect([...shipped].filter((f) => f.startsWith('test/') || f.startsWith('src/') || f.startsWith('.scratch/'))).toEqual([]);
    await mkdir(path.join(project, 'node_modules'));
    await run('tar', ['-xzf', path.join(project, filename), '-C', path.join(project, 'node_modules')]);
    await rename(path.join(project, 'node_modules', 'package'), path.join(project, 'node_modules', 'sandbox-fleet'));
    await writeFile(path.join(project, 'package.json'), JSON.stringify({ name: 'consumer', type: 'module', private: true }));
    await writeFile(path.join(project, 'consumer.mjs'), CONSUMER);
    await writeFile(path.join(project, 'consumer.ts'), TS_CONSUMER);
    await writeFile(path.join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', strict: true, noEmit: true, skipLibCheck: true, types: [] }, files: ['consumer.ts'] }));

    const tsc = await run(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', project]).catch((error: { stdout: string }) => ({ stdout: error.stdout, failed: true }));
    expect(tsc, tsc.stdout).not.toHaveProperty('failed');

    const env = await testEnv({ FLEET_HTTP_PORT: '0' });
    const up = startFleet(['up'], env);
    await up.waitForOutput(/web\s+http:\/\/127\.0\.0\.1:\d+/, 60_000);
    const consumer = await run(process.execPath, ['consumer.mjs'], { cwd: project, env });
    expect(JSON.parse(consumer.stdout)).toEqual({
      generation: 1,
      persisted: 'ws-pack',
      stale: { instance: true, code: 'StaleGeneration', retryable: false },
      internal: 'ERR_PACKAGE_PATH_NOT_EXPORTED',
    });
  });
});
