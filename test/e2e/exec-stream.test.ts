// Exec through the front doors of a running `fleet up`, for each provider (local, and Vercel
// through the real SDK against the loopback stand-in): output streams as NDJSON or SSE before the
// command ends, stdin reaches the command, the exit (or a typed error) comes last, a client that
// goes away stops the command, and `fleet exec -i` streams and forwards its own stdin.
import { spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { addCleanup } from '../helpers/cleanup.js';
import { readEvents } from '../helpers/event-stream.js';
import { testEnv } from '../helpers/fleet-env.js';
import { FLEET_BIN, ROOT, startFleet } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';
import { providerEnv } from '../helpers/vercel-standin/standin-env.js';

async function fleetUp(env: Record<string, string>) {
  const up = startFleet(['up'], env);
  await up.waitForOutput(/web\s+http:\/\/127\.0\.0\.1:\d+/, 60_000);
  return /web\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(up.stdout())![1]!;
}

// Whether a process whose command line contains `marker` runs on this machine (both providers run commands here).
async function running(marker: string): Promise<boolean> {
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(marker)) return true;
  }
  return false;
}

// `fleet exec` with `input` on its stdin.
function fleetExec(args: string[], env: Record<string, string>, input: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [FLEET_BIN, 'exec', ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  addCleanup(() => void child.kill('SIGKILL'));
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end(input);
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

const text = (events: Record<string, any>[], type: string) => events.filter((e) => e.type === type).map((e) => e.data as string).join('');

for (const provider of ['local', 'vercel'] as const) {
  describe(`exec through fleet up (${provider})`, () => {
    it('streams output before the command ends (NDJSON, SSE), forwards stdin, ends with the exit; a client that leaves stops the command; the CLI streams and forwards -i', { timeout: 180_000 }, async () => {
      const extra = await providerEnv(provider);
      const env = await testEnv({ ...extra, FLEET_HTTP_PORT: '0', FLEET_GC_SCHEDULE: 'idle=off,orphans=off' });
      const web = await fleetUp(env);
      const at = (p: string) => `${web}/v1/workspaces/ws-x${p}`;
      const post = (p: string, body: unknown, accept = 'application/json') => fetch(at(p), { method: 'POST', headers: { 'content-type': 'application/json', accept }, body: JSON.stringify(body) });
      expect((await post('/provision?wait=true', { provider })).status).toBe(200);

      // The command waits for a file a second exec makes: its first line must arrive while it waits.
      const first = await post('/exec', { cmd: ['sh', '-c', 'echo started; while [ ! -e go ]; do sleep 0.05; done; cat; echo done >&2; exit 3'], stdin: 'from stdin\n', timeoutMs: 60_000 }, 'application/x-ndjson');
      expect(first.status).toBe(200);
      expect(first.headers.get('content-type')).toBe('application/x-ndjson');
      const stream = readEvents(first);
      expect(await stream.until((e) => e.type === 'stdout')).toEqual({ type: 'stdout', data: 'started\n' });
      expect(stream.seen.some((e) => e.type === 'exit')).toBe(false);
      const gate = (await (await post('/exec', { cmd: ['touch', 'go'] })).json()) as Record<string, unknown>;
      expect(gate).toMatchObject({ exitCode: 0 });
      const events = await stream.rest();
      expect(text(events, 'stdout')).toBe('started\nfrom stdin\n');
      expect(text(events, 'stderr')).toBe('done\n');
      expect(events.at(-1)).toMatchObject({ type: 'exit', exitCode: 3, timedOut: false, droppedBytes: 0, handle: expect.any(String) });

      // SSE: each event named and numbered; a UTF-8 character split across writes arrives whole.
      const sse = readEvents(await post('/exec', { cmd: ['sh', '-c', "printf 'caf\\303'; sleep 0.2; printf '\\251\\n'; echo oops >&2"] }, 'text/event-stream'), { sse: true });
      const messages = await sse.rest();
      expect(text(messages, 'stdout')).toBe('café\n');
      expect(text(messages, 'stderr')).toBe('oops\n');
      expect(messages.at(-1)).toMatchObject({ sseEvent: 'exit', type: 'exit', exitCode: 0 });
      expect(messages.map((m) => Number(m.sseId))).toEqual(messages.map((_, i) => i + 1));

      // Refused before the stream starts: an answer with a status, nothing run.
      const missing = await fetch(`${web}/v1/workspaces/ws-none/exec`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/x-ndjson' }, body: JSON.stringify({ cmd: ['true'] }) });
      expect(missing.status).toBe(404);
      expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('WorkspaceNotFound');
      const tooBig = await post('/exec', { cmd: ['cat'], stdin: 'x'.repeat(1024 * 1024 + 1) }, 'application/x-ndjson');
      expect(tooBig.status).toBe(400);
      expect(((await tooBig.json()) as { error: { field: string } }).error.field).toBe('stdin');

      // A client that goes away stops its command (the marker names this run's process).
      const marker = `59${Math.floor(Math.random() * 1e6)}`;
      const leaving = readEvents(await post('/exec', { cmd: ['sh', '-c', `echo started; exec sleep ${marker}`], timeoutMs: 600_000 }, 'application/x-ndjson'));
      await leaving.until((e) => e.type === 'stdout');
      await waitFor('the command to run', async () => ((await running(marker)) ? true : undefined));
      await leaving.cancel();
      await waitFor('the command stopped after its client left', async () => ((await running(marker)) ? undefined : true), 60_000);

      // The CLI: output as it comes, stdin forwarded with -i, the command's exit code.
      const cli = await fleetExec(['ws-x', '-i', '--', 'sh', '-c', 'cat; echo to-err >&2; exit 5'], env, 'piped into the cli\n');
      expect(cli).toMatchObject({ code: 5, stdout: 'piped into the cli\n', stderr: 'to-err\n' });
    });
  });
}
