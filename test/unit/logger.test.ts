// The root logger's formats: JSON lines for collectors, readable lines for people (one line a
// record, job scope kept, a stack indented below), and `auto` choosing by whether stderr is a terminal.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, jobLogger } from '../../src/logger.js';

// A destination that keeps what was written.
function capture() {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { stream, text: () => chunks.join('') };
}

describe('createLogger', () => {
  it('json: one JSON object a line with level, time, pid and the bindings', () => {
    const out = capture();
    const logger = createLogger({ level: 'info', format: 'json', bindings: { component: 'worker' }, destination: out.stream as never });
    logger.info({ queue: 'gc' }, 'workers started');
    const line = JSON.parse(out.text().trim()) as Record<string, unknown>;
    expect(line).toMatchObject({ level: 30, component: 'worker', queue: 'gc', msg: 'workers started', pid: process.pid });
    expect(typeof line.time).toBe('string');
  });

  it('pretty: a readable line with the level, message and fields, a stack indented, no JSON', async () => {
    const out = capture();
    const logger = createLogger({ level: 'info', format: 'pretty', bindings: { component: 'worker' }, destination: out.stream as never });
    const job = jobLogger(logger, { queue: 'persist@h1', jobId: '42', attempt: 1, maxAttempts: 3, workspaceId: 'ws-1' });
    job.error({ err: new Error('disk on fire') }, 'job failed (attempt 1 of 3)');
    logger.debug('not at info');
    await new Promise<void>((resolve) => setImmediate(resolve));
    const text = out.text();
    const [first, ...rest] = text.split('\n');
    expect(first).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] ERROR: job failed \(attempt 1 of 3\)$/);
    expect(text).toContain('queue: "persist@h1"');
    expect(text).toContain('workspaceId: "ws-1"');
    expect(rest.some((line) => /^\s+Error: disk on fire$/.test(line))).toBe(true);
    expect(text).not.toContain('not at info');
    expect(text.trimStart().startsWith('{')).toBe(false);
  });

  it('auto: JSON when lines go anywhere but a terminal', () => {
    const out = capture();
    const logger = createLogger({ level: 'info', format: 'auto', destination: out.stream as never });
    logger.info('hello');
    expect(JSON.parse(out.text().trim())).toMatchObject({ msg: 'hello' });
  });
});
