// The BullMQ adapter of fleet processors: validation, deadline and cancellation signal, forced
// failure of a processor that ignores its signal, retry intent, and one log line per outcome.
import { UnrecoverableError, type Job } from 'bullmq';
import { describe, expect, it, vi } from 'vitest';
import { DeadlineExceededError } from '../../src/errors/deadline-exceeded-error.js';
import { decodeFailure } from '../../src/errors/failure-codec.js';
import { JobDataUnreadableError } from '../../src/errors/job-data-unreadable-error.js';
import { PayloadInvalidError } from '../../src/errors/payload-invalid-error.js';
import { createLogger } from '../../src/logger.js';
import { QUEUES } from '../../src/queues/index.js';
import { withSignal, type ProcessorContext } from '../../src/jobs/processor-context.js';
import { wrapProcessor, type WrapOptions } from '../../src/workers/wrap-processor.js';
import { UnreadableJobData } from '../../src/workers/unreadable-job-data.js';
import { JobCancellation } from '../../src/workers/job-cancellation.js';
import { JobCancelledError } from '../../src/errors/job-cancelled-error.js';

// A pino destination that keeps parsed lines.
function sink() {
  const lines: Record<string, unknown>[] = [];
  const raw: string[] = [];
  return {
    lines,
    raw,
    stream: {
      write(line: string) {
        raw.push(line);
        lines.push(JSON.parse(line) as Record<string, unknown>);
      },
    },
  };
}

// A job as BullMQ hands it to a processor.
function job(data: unknown, over: Partial<{ id: string; attemptsMade: number; attempts: number }> = {}): Job {
  return { id: over.id ?? '42', data, opts: { attempts: over.attempts ?? 3 }, attemptsMade: over.attemptsMade ?? 0, updateProgress: async () => undefined, log: async () => 0 } as unknown as Job;
}

function wrap(processor: WrapOptions['processor'], over: Partial<WrapOptions> | 'info' = {}) {
  const out = sink();
  const logger = createLogger({ level: over === 'info' ? 'info' : 'debug', destination: out.stream as never });
  if (over === 'info') over = {};
  const fn = wrapProcessor({ definition: QUEUES.persist, bullQueueName: 'persist@h1', processor, deadlineMs: 60_000, logger, abortGraceMs: 50, ...over });
  return { fn, out };
}

const PAYLOAD = { workspaceId: 'ws-1', generation: 2 };

// A processor that fails with its signal's reason once it aborts (kept in `seen`); `started` runs once it listens.
function failOnAbort(seen: { reason?: unknown }, started: () => void = () => undefined): WrapOptions['processor'] {
  return (_payload, ctx) =>
    new Promise((_, reject) => {
      ctx.signal.addEventListener('abort', () => {
        seen.reason = ctx.signal.reason;
        reject(ctx.signal.reason);
      });
      started();
    });
}

describe('wrapProcessor', () => {
  it('writes each new progress step as one line of the job log, and every report as progress', async () => {
    const logged: string[] = [];
    const reported: unknown[] = [];
    const j = { ...job(PAYLOAD), log: async (row: string) => logged.push(row), updateProgress: async (p: unknown) => void reported.push(p) } as unknown as Job;
    const { fn } = wrap(async (_payload, ctx) => {
      await ctx.progress({ step: 'link', percent: 10 });
      await ctx.progress({ step: 'link', done: 5, total: 10 });
      await ctx.progress({ step: 'commit', percent: 70 });
      return null;
    });
    await fn(j, 'token');
    expect(logged).toHaveLength(2);
    expect(logged[0]).toMatch(/^\d{4}-\d{2}-\d{2}T\S+Z link \(\d+ ms\)$/);
    expect(logged[1]).toMatch(/ commit \(\d+ ms\)$/);
    expect(reported).toHaveLength(3);
    expect(reported[1]).toMatchObject({ step: 'link', done: 5, total: 10 });
  });

  it('passes the parsed payload and the job context, returns the result and logs one completion line', async () => {
    let seen: { payload: unknown; ctx: ProcessorContext } | undefined;
    const { fn, out } = wrap(async (payload, ctx) => {
      seen = { payload, ctx };
      return { ok: true };
    });
    const started = Date.now();
    await expect(fn(job(PAYLOAD, { attemptsMade: 1 }), 'token')).resolves.toEqual({ ok: true });
    expect(seen!.payload).toEqual({ ...PAYLOAD, delete: false, reason: 'manual', force: false });
    expect(seen!.ctx).toMatchObject({ queue: 'persist@h1', jobId: '42', attempt: 2, maxAttempts: 3 });
    expect(seen!.ctx.deadlineAt).toBeGreaterThanOrEqual(started + 60_000);
    expect(seen!.ctx.signal.aborted).toBe(false);
    expect(out.lines).toHaveLength(1);
    expect(Object.keys(out.lines[0]!)).toEqual(['level', 'time', 'pid', 'queue', 'jobId', 'attempt', 'maxAttempts', 'workspaceId', 'durationMs', 'msg']);
    expect(out.lines[0]).toMatchObject({ level: 20, queue: 'persist@h1', jobId: '42', attempt: 2, maxAttempts: 3, workspaceId: 'ws-1', msg: 'job completed' });
  });

  it('logs a success at debug only: at the default level info, a completed job writes nothing', async () => {
    const { fn, out } = wrap(async () => ({ ok: true }), 'info');
    await expect(fn(job(PAYLOAD), 'token')).resolves.toEqual({ ok: true });
    expect(out.lines).toEqual([]);
    const failing = wrap(async () => {
      throw new Error('boom');
    }, 'info');
    await expect(failing.fn(job(PAYLOAD), 'token')).rejects.toThrow();
    expect(failing.out.lines).toEqual([expect.objectContaining({ level: 50, msg: 'job failed (attempt 1 of 3)' })]);
  });

  it('binds the job scope to lines the processor logs, and the completion line stays the same', async () => {
    const { fn, out } = wrap(async (_payload, ctx) => {
      ctx.logger.warn({ step: 'x' }, 'from the processor');
      return null;
    });
    await fn(job(PAYLOAD), 't');
    expect(out.lines[0]).toMatchObject({ level: 40, queue: 'persist@h1', jobId: '42', workspaceId: 'ws-1', step: 'x', msg: 'from the processor' });
    expect(Object.keys(out.lines[1]!)).toEqual(['level', 'time', 'pid', 'queue', 'jobId', 'attempt', 'maxAttempts', 'workspaceId', 'durationMs', 'msg']);
  });

  it('fails data that is not JSON as unrecoverable JobDataUnreadable, naming job and queue, and keeps it readable', async () => {
    let ran = false;
    const { fn, out } = wrap(async () => {
      ran = true;
    });
    const stored: unknown[] = [];
    const unreadable = { ...job(new UnreadableJobData('{"workspaceId":', new SyntaxError('Unexpected end of JSON input'))), updateData: async (d: unknown) => void stored.push(d) } as unknown as Job;
    const error = await fn(unreadable, 'token').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnrecoverableError);
    const [human] = (error as Error).message.split('\n');
    expect(human).toBe('JobDataUnreadable: job 42 on queue persist@h1: data is not valid JSON (Unexpected end of JSON input); failed without running');
    // The caller gets the same class back, with its retry intent and context.
    const decoded = decodeFailure('persist@h1', '42', (error as Error).message);
    expect(decoded).toBeInstanceOf(JobDataUnreadableError);
    expect(decoded).toMatchObject({ retryable: false, context: { queue: 'persist@h1', jobId: '42' }, remoteJob: { queue: 'persist@h1', jobId: '42' } });
    expect(ran).toBe(false);
    expect(stored).toEqual([{ unreadableData: '{"workspaceId":' }]);
    expect(out.lines).toHaveLength(1);
    expect(out.lines[0]).toMatchObject({ level: 50, jobId: '42', err: { code: 'JobDataUnreadable' } });
  });

  it('refuses an invalid payload as unrecoverable without running the processor', async () => {
    let ran = false;
    const { fn, out } = wrap(async () => {
      ran = true;
    });
    const error = await fn(job({ workspaceId: '../x', generation: 0 }), 't').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnrecoverableError);
    expect((error as Error).message).toMatch(/^PayloadInvalid: persist payload: /);
    expect(ran).toBe(false);
    expect(out.lines[0]).toMatchObject({ level: 50, msg: 'job refused: invalid payload', jobId: '42' });
  });

  it('aborts the signal at the deadline; the processor failing with the reason is a retryable failure', async () => {
    const seen: { reason?: unknown } = {};
    const { fn, out } = wrap(failOnAbort(seen), { deadlineMs: 20 });
    const error = await fn(job(PAYLOAD), 't').catch((e: unknown) => e);
    expect(seen.reason).toBeInstanceOf(DeadlineExceededError);
    expect(error).not.toBeInstanceOf(UnrecoverableError);
    expect((error as Error).message).toMatch(/^DeadlineExceeded: /);
    expect(out.lines.at(-1)).toMatchObject({ level: 50, retryable: true, willRetry: true, msg: 'job failed (attempt 1 of 3)' });
  });

  it('takes two parameters, so BullMQ creates no AbortController of its own for a job', () => {
    // BullMQ 6.7 passes a signal (and allocates a controller per job) only to processors that declare a third parameter.
    const { fn } = wrap(async () => null);
    expect(fn.length).toBeLessThan(3);
  });

  it('aborts the signal when the worker cancels the job (lock lost, shutdown), with a typed, retryable reason', async () => {
    const cancellation = new JobCancellation();
    const seen: { reason?: unknown } = {};
    const { fn, out } = wrap(
      failOnAbort(seen, () => cancellation.cancel('42', new JobCancelledError('persist@h1', '42', 'lock lost'))),
      { cancellation },
    );
    expect(cancellation.cancel('42', 'not running yet')).toBe(false);
    const error = await fn(job(PAYLOAD), 't').catch((e: unknown) => e);
    expect(seen.reason).toBeInstanceOf(JobCancelledError);
    expect((error as Error).message).toMatch(/^JobCancelled: job 42 on queue persist@h1 cancelled: lock lost/);
    expect(error).not.toBeInstanceOf(UnrecoverableError);
    expect(out.lines.at(-1)).toMatchObject({ level: 50, retryable: true, willRetry: true });
    // A finished job is no longer cancellable.
    expect(cancellation.size).toBe(0);
    expect(cancellation.cancel('42', 'late')).toBe(false);
  });

  it('a job cancelled before its processor first reads ctx.signal sees it already aborted, with the reason', async () => {
    const cancellation = new JobCancellation();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let seen: { aborted: boolean; reason: unknown } | undefined;
    const { fn } = wrap(
      async (_payload, ctx) => {
        await gate;
        seen = { aborted: ctx.signal.aborted, reason: ctx.signal.reason };
        return null;
      },
      { cancellation },
    );
    const pending = fn(job(PAYLOAD), 't');
    expect(cancellation.cancel('42', new JobCancelledError('persist@h1', '42', 'shutdown'))).toBe(true);
    release();
    await pending;
    expect(seen?.aborted).toBe(true);
    expect(seen?.reason).toBeInstanceOf(JobCancelledError);
  });

  it('fails the job after the grace period when the processor ignores its aborted signal', async () => {
    const cancellation = new JobCancellation();
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const { fn } = wrap(() => (started(), new Promise(() => undefined)), { abortGraceMs: 30, cancellation });
    const pending = fn(job(PAYLOAD), 't').catch((e: unknown) => e);
    await running;
    cancellation.cancelAllWith((jobId) => new JobCancelledError('persist@h1', jobId, 'shutdown'));
    const error = await pending;
    expect((error as Error).message).toMatch(/^JobCancelled: job 42 on queue persist@h1 cancelled: shutdown/);
  });

  it('maps a permanent fleet error to UnrecoverableError', async () => {
    const { fn } = wrap(async () => {
      throw new PayloadInvalidError('thing', [{ field: 'x', message: 'bad' }]);
    });
    const error = await fn(job(PAYLOAD), 't').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnrecoverableError);
  });

  it('clears its timers: a finished job never fires the deadline', async () => {
    // Fake timers: the deadline's timer is seen armed while the job runs and gone once it ends,
    // and running the clock far past the deadline aborts nothing (no sleep to prove an absence).
    vi.useFakeTimers();
    try {
      let signal: AbortSignal | undefined;
      let armed = 0;
      const { fn } = wrap(
        async (_payload, ctx) => {
          signal = ctx.signal;
          armed = vi.getTimerCount();
          return 1;
        },
        { deadlineMs: 20 },
      );
      await fn(job(PAYLOAD), 't');
      expect(armed).toBe(1);
      expect(vi.getTimerCount()).toBe(0);
      await vi.advanceTimersByTimeAsync(1_000);
      expect(signal!.aborted).toBe(false);
    } finally {
      vi.useRealTimers();
    }
  });

  it('clears the grace timer too: a job that gives up at its deadline leaves no timer behind', async () => {
    vi.useFakeTimers();
    try {
      const { fn } = wrap(
        (_payload, ctx) =>
          new Promise((_, reject) => {
            ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason));
          }),
        { deadlineMs: 20, abortGraceMs: 50 },
      );
      const pending = fn(job(PAYLOAD), 't').catch((e: unknown) => e);
      await vi.advanceTimersByTimeAsync(20);
      expect((await pending) as Error).toBeInstanceOf(Error);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it('a context given another signal (withSignal) keeps the job logger, fields and progress; only the signal differs', async () => {
    const progressed: unknown[] = [];
    const logged: string[] = [];
    const other = new AbortController();
    let seen: ProcessorContext | undefined;
    const { fn, out } = wrap(async (_payload, ctx) => {
      seen = withSignal(ctx, other.signal);
      seen.logger.info('from the derived context');
      await seen.progress({ step: 'copy', percent: 10 });
    });
    const j = job(PAYLOAD, { id: '7' });
    Object.assign(j, { updateProgress: async (p: unknown) => void progressed.push(p), log: async (line: string) => void logged.push(line) });
    await fn(j);
    expect(seen).toMatchObject({ queue: 'persist@h1', jobId: '7', attempt: 1, maxAttempts: 3, deadlineAt: expect.any(Number) });
    expect(seen!.signal).toBe(other.signal);
    expect(out.lines.find((l) => l.msg === 'from the derived context')).toMatchObject({ jobId: '7', queue: 'persist@h1', workspaceId: 'ws-1' });
    expect(progressed).toEqual([expect.objectContaining({ step: 'copy', percent: 10 })]);
    expect(logged).toEqual([expect.stringMatching(/ copy \(\d+ ms\)$/)]);
  });
});
