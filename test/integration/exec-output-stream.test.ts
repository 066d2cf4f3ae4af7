// A streamed exec between hosts over the real Redis (state/exec-output-store.ts), with the hostops
// transport a plain object standing for the serving host: chunks reach the caller in order while
// the call is in flight, entries trimmed before they were read show as a notice, a stream that
// never ended is made up from the result, an older host that refuses the stream id runs the
// command once without it, and the stream is removed afterwards.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { encodeFailure, decodeFailure } from '../../src/errors/failure-codec.js';
import { PayloadInvalidError } from '../../src/errors/payload-invalid-error.js';
import type { HostOpPayload } from '../../src/hostops/host-op-payload.js';
import { RemoteLocalProvider } from '../../src/hostops/remote-local-provider.js';
import { fleetKeys } from '../../src/keys.js';
import { ExecOutputStore, MAX_ENTRIES, newOutputCursor } from '../../src/state/exec-output-store.js';
import { testConnection, testEnv } from '../helpers/fleet-env.js';

const HANDLE = 'local:host-b:ws:g1';
const RESULT = { exitCode: 0, signal: null, stdout: 'abc', stderr: 'E', timedOut: false, durationMs: 1 };

async function setup() {
  const config = loadConfig(await testEnv());
  const redis = testConnection(config);
  const keys = fleetKeys(config.redis.prefix, config.redis.keyLayout);
  return { redis, keys, store: new ExecOutputStore(redis, keys) };
}

// Collects what the caller's sinks receive.
function sinks() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, onStdout: (c: Buffer) => out.push(c.toString()), onStderr: (c: Buffer) => err.push(c.toString()) };
}

describe('streamed exec output between hosts', () => {
  it('delivers the chunks the serving host appends while the call runs, in order, then removes the stream', async () => {
    const { redis, keys, store } = await setup();
    const seen = sinks();
    let streamId = '';
    const remote = new RemoteLocalProvider(
      {
        call: async (_host, request: HostOpPayload) => {
          const args = (request as { args: { stream?: string } }).args;
          streamId = args.stream!;
          await store.append(streamId, [{ stream: 'stdout', data: Buffer.from('a') }, { stream: 'stderr', data: Buffer.from('E') }], 1);
          // The caller sees the first chunk while its call is still in flight.
          while (seen.out.length === 0) await new Promise((resolve) => setImmediate(resolve));
          await store.append(streamId, [{ stream: 'stdout', data: Buffer.from('bc') }], 3);
          await store.end(streamId);
          return RESULT;
        },
      },
      'host-b',
      store,
    );
    const result = await remote.exec(HANDLE, { cmd: ['x'], timeoutMs: 5_000, signal: AbortSignal.timeout(10_000), onStdout: seen.onStdout, onStderr: seen.onStderr });
    expect(result).toEqual(RESULT);
    expect(seen.out.join('')).toBe('abc');
    expect(seen.err).toEqual(['E']);
    expect(await redis.exists(keys.execOutput(streamId))).toBe(0);
  });

  it('tells a reader about entries trimmed before it read them; makes up a stream that never ended from the result', async () => {
    const { store } = await setup();
    // More entries than a stream keeps, all written before anyone reads: the oldest are trimmed.
    const total = MAX_ENTRIES * 2;
    for (let seq = 1; seq <= total; seq += 100) {
      await store.append('trimmed', Array.from({ length: Math.min(100, total - seq + 1) }, (_, i) => ({ stream: 'stdout' as const, data: Buffer.from(String((seq + i) % 10)) })), seq);
    }
    await store.end('trimmed');
    const cursor = newOutputCursor();
    const gaps: number[] = [];
    let chunks = 0;
    await store.drain('trimmed', cursor, (_chunk, gap) => {
      chunks += 1;
      if (gap > 0) gaps.push(gap);
    });
    expect(cursor.ended).toBe(true);
    expect(gaps.length).toBe(1);
    expect(gaps[0]! + chunks).toBe(total);
    expect(cursor.lastSeq).toBe(total);

    const lost = sinks();
    const silent = new RemoteLocalProvider({ call: async () => RESULT }, 'host-b', store);
    await silent.exec(HANDLE, { cmd: ['x'], timeoutMs: 5_000, signal: AbortSignal.timeout(10_000), onStdout: lost.onStdout, onStderr: lost.onStderr });
    expect(lost).toMatchObject({ out: ['abc'], err: ['E'] });
  });

  it('an older serving host that refuses the stream id runs the command once, without it', async () => {
    const { store } = await setup();
    const sent: HostOpPayload[] = [];
    const seen = sinks();
    const old = new RemoteLocalProvider(
      {
        call: async (_host, request: HostOpPayload) => {
          sent.push(request);
          if ('stream' in (request as { args: object }).args) throw decodeFailure('hostops@host-b', '1', encodeFailure(new PayloadInvalidError('hostops payload', [{ field: 'args', message: 'unrecognized key: "stream"', value: {} }])));
          return RESULT;
        },
      },
      'host-b',
      store,
    );
    expect(await old.exec(HANDLE, { cmd: ['x'], timeoutMs: 5_000, signal: AbortSignal.timeout(10_000), onStdout: seen.onStdout, onStderr: seen.onStderr })).toEqual(RESULT);
    expect(sent.map((r) => 'stream' in (r as { args: object }).args)).toEqual([true, false]);
    expect(seen).toMatchObject({ out: ['abc'], err: ['E'] });
  });
});
