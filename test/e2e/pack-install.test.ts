// The package as an app installs it: `npm pack`, the tarball unpacked as a dependency of a fresh
// project, imported by its public name against a running `fleet up`: provision and persist with
// waits, a worker's failure back as the exported error class, internals not reachable, the HTTP
// client's files, exec, diff, history, restore, typed errors and events, and the types resolve
// for a TypeScript consumer (a waited result is not optional).
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
import { connectFleetClient, createFleetHttpClient, StaleGenerationError } from 'sandbox-fleet';
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
  // The HTTP client: files, exec with streamed output and stdin, history, diff, a typed error answer, events.
  const http = createFleetHttpClient({ url: process.env.FLEET_WEB_URL });
  // The first turn's persist, as the event stream tells it (checkpoints may come first).
  const events = http.events({ workspaceId: 'ws-http', types: ['persisted'] });
  const firstTurn = (async () => {
    for await (const event of events) if (event.reason === 'turn-end') return event;
  })();
  const made = await http.provision('ws-http', {}, { wait: true });
  await http.writeFile('ws-http', 'src/app.py', 'print(1)\\n');
  const chunks = [];
  const ran = await http.exec('ws-http', { cmd: ['sh', '-c', 'cat src/app.py; cat; echo done >&2'], stdin: 'from stdin\\n', onStdout: (text) => chunks.push(text) });
  const one = await http.persist('ws-http', { generation: made.result.generation, delete: true, reason: 'turn-end' }, { wait: true });
  await http.writeFile('ws-http', 'src/app.py', 'print(2)\\n');
  const two = await http.persist('ws-http', { generation: made.result.generation, delete: true, reason: 'turn-end' }, { wait: true });
  const diff = await http.diff('ws-http', { from: one.result.revision, to: two.result.revision });
  const history = await http.history('ws-http', 'src/app.py');
  await http.restoreFile('ws-http', 'src/app.py', one.result.revision);
  const restored = (await http.readFile('ws-http', 'src/app.py')).toString();
  let httpStale = null;
  try {
    await http.persist('ws-http', { generation: made.result.generation + 3 });
  } catch (error) {
    httpStale = { instance: error instanceof StaleGenerationError, code: error.code };
  }
  const event = await firstTurn;
  const httpView = {
    stdout: ran.stdout, streamed: chunks.join(''), stderr: ran.stderr, exitCode: ran.exitCode,
    changed: diff.changed.map((e) => e.path), historyChanges: history.revisions.length, restored, httpStale,
    event: { type: event.type, revision: event.revision === one.result.revision },
  };
  console.log(JSON.stringify({ generation: provisioned.result.generation, persisted: persisted.result.workspaceId, stale, internal, http: httpView }));
} finally {
  await fleet.close();
}
`;

const TS_CONSUMER = `
import { createFleetClient, createFleetHttpClient, loadConfig, StaleGenerationError, type PersistResult, type FleetClient, type FleetEvent } from 'sandbox-fleet';
const client: FleetClient = createFleetClient({ config: loadConfig({}) });
const files: number = ({} as PersistResult).files;
// With { wait: true } the result is there: no optional chaining, no assertion.
export async function waited(): Promise<number> {
  const generation: number = (await client.provision({ workspaceId: 'w' }, { wait: true })).result.generation;
  const http = createFleetHttpClient({ url: 'http://127.0.0.1:1' });
  const revision: string | null = (await http.persist('w', { generation }, { wait: true })).result.revision;
  // @ts-expect-error without wait the result may be absent
  const maybe: number = (await client.provision({ workspaceId: 'w' })).result.generation;
  for await (const event of http.events()) if (event.type === 'persisted') return event.files + (revision ? 1 : 0) + maybe;
  return 0;
}
export const check = [client, files, StaleGenerationError, null as FleetEvent | null];
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
    const web = /web\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(up.stdout())![1]!;
    const consumer = await run(process.execPath, ['consumer.mjs'], { cwd: project, env: { ...env, FLEET_WEB_URL: web } });
    expect(JSON.parse(consumer.stdout)).toEqual({
      generation: 1,
      persisted: 'ws-pack',
      stale: { instance: true, code: 'StaleGeneration', retryable: false },
      internal: 'ERR_PACKAGE_PATH_NOT_EXPORTED',
      http: {
        stdout: 'print(1)\nfrom stdin\n',
        streamed: 'print(1)\nfrom stdin\n',
        stderr: 'done\n',
        exitCode: 0,
        changed: ['src/app.py'],
        historyChanges: 2,
        restored: 'print(1)\n',
        httpStale: { instance: true, code: 'StaleGeneration' },
        event: { type: 'persisted', revision: true },
      },
    });
  });
});
