import { describe, expect, it } from 'vitest';
import { PayloadInvalidError } from '../../src/errors/payload-invalid-error.js';
import { QUEUES, parsePayload, parseQueueName, queueNameFor } from '../../src/queues/index.js';
import { BAD_PAYLOADS } from '../fixtures/bad-payloads.js';

describe('queue payload schemas', () => {
  it('has at least 20 malformed payloads covering all six queues', () => {
    expect(BAD_PAYLOADS.length).toBeGreaterThanOrEqual(20);
    expect(new Set(BAD_PAYLOADS.map((b) => b.queue)).size).toBe(6);
  });

  for (const bad of BAD_PAYLOADS) {
    it(`refuses ${bad.queue} ${JSON.stringify(bad.data).slice(0, 60)} naming ${bad.field}`, () => {
      let caught: unknown;
      try {
        parsePayload(`${bad.queue} payload`, QUEUES[bad.queue].schema, bad.data);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(PayloadInvalidError);
      const error = caught as PayloadInvalidError;
      expect(error.issues.map((i) => i.field)).toContain(bad.field);
      expect(error.message).toContain(bad.field);
    });
  }

  it('fills defaults for valid payloads', () => {
    expect(parsePayload('p', QUEUES.persist.schema, { workspaceId: 'ws-1', generation: 3 })).toEqual({
      workspaceId: 'ws-1',
      generation: 3,
      delete: false,
      reason: 'manual',
      force: false,
    });
    expect(parsePayload('p', QUEUES.gc.schema, { kind: 'litter' })).toEqual({ kind: 'litter', dryRun: false, limit: 1000 });
  });

  it('names host-bound queues after their host', () => {
    expect(queueNameFor('persist', 'h1')).toBe('persist@h1');
    expect(queueNameFor('checkpoint', 'h1')).toBe('checkpoint@h1');
    expect(queueNameFor('provision', 'h1')).toBe('provision');
    expect(parseQueueName('persist@h1')).toEqual({ name: 'persist', hostId: 'h1' });
    expect(parseQueueName('persist')).toBeNull();
    expect(parseQueueName('gc@h1')).toBeNull();
    expect(parseQueueName('nope')).toBeNull();
  });
});
