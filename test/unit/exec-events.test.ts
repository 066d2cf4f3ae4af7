// A command's run as HTTP stream events, without I/O: the Accept header picks the format, output
// comes in order with split UTF-8 characters kept whole, the exit (or the typed error) comes last,
// a slow client's overflow is dropped and counted, and a client that leaves cancels the run.
import { describe, expect, it } from 'vitest';
import { WorkspaceBusyError } from '../../src/errors/workspace-busy-error.js';
import { encodeExecEvent, execEvents, ExecEventSchema, streamFormat, type ExecEvent } from '../../src/http/exec-events.js';

const result = { exitCode: 0, signal: null, stdout: '', stderr: '', timedOut: false, durationMs: 5, handle: 'h' };

async function all(events: AsyncIterable<ExecEvent>): Promise<ExecEvent[]> {
  const out: ExecEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

describe('exec events', () => {
  it('picks the stream format from Accept, JSON otherwise', () => {
    expect(streamFormat('application/x-ndjson')).toBe('application/x-ndjson');
    expect(streamFormat('text/html, text/event-stream;q=0.9')).toBe('text/event-stream');
    expect(streamFormat('application/json')).toBeNull();
    expect(streamFormat(undefined)).toBeNull();
  });

  it('streams output in order, keeps a split UTF-8 character whole, and ends with the exit', async () => {
    const events = await all(
      execEvents(async ({ onStdout, onStderr }) => {
        onStdout(Buffer.from([0x63, 0x61, 0x66, 0xc3]));
        onStderr(Buffer.from('warn\n'));
        onStdout(Buffer.from([0xa9, 0x0a]));
        return result;
      }, () => undefined),
    );
    expect(events).toEqual([
      { type: 'stdout', data: 'caf' },
      { type: 'stderr', data: 'warn\n' },
      { type: 'stdout', data: 'é\n' },
      { type: 'exit', exitCode: 0, signal: null, timedOut: false, durationMs: 5, handle: 'h', droppedBytes: 0 },
    ]);
    for (const event of events) expect(ExecEventSchema.safeParse(event).success).toBe(true);
    expect(encodeExecEvent('application/x-ndjson', events[0]!, 1)).toBe('{"type":"stdout","data":"caf"}\n');
    expect(encodeExecEvent('text/event-stream', events[3]!, 4)).toMatch(/^id: 4\nevent: exit\ndata: \{"type":"exit",.*\}\n\n$/);
    expect(encodeExecEvent('text/event-stream', { type: 'heartbeat' }, 5)).toBe(': heartbeat\n\n');
  });

  it('ends with the typed error when the run fails', async () => {
    const events = await all(execEvents(async () => Promise.reject(new WorkspaceBusyError('ws', 'exec', 1, undefined)), () => undefined));
    expect(events).toEqual([{ type: 'error', error: expect.objectContaining({ code: 'WorkspaceBusy', retryable: true }) }]);
  });

  it('drops and counts output past the cap while nobody reads', async () => {
    const events = await all(
      execEvents(async ({ onStdout }) => {
        onStdout(Buffer.from('12345'));
        onStdout(Buffer.from('678'));
        return result;
      }, () => undefined, { maxQueuedBytes: 6 }),
    );
    expect(events).toEqual([{ type: 'stdout', data: '12345' }, expect.objectContaining({ type: 'exit', droppedBytes: 3 })]);
  });

  it('cancels the run when the client leaves', async () => {
    let cancelled = 0;
    let finish!: () => void;
    const events = execEvents(async ({ onStdout }) => {
      onStdout(Buffer.from('first\n'));
      await new Promise<void>((resolve) => (finish = resolve));
      return result;
    }, () => (cancelled += 1));
    const iterator = events[Symbol.asyncIterator]();
    expect(await iterator.next()).toEqual({ value: { type: 'stdout', data: 'first\n' }, done: false });
    const waiting = iterator.next();
    await iterator.return!();
    expect(await waiting).toEqual({ value: undefined, done: true });
    expect(cancelled).toBe(1);
    finish();
  });
});
