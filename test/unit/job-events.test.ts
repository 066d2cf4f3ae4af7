// Which job outcomes are events, without I/O: a new incarnation is, finding the live one again is
// not; a turn's persist is even when unchanged, an unchanged checkpoint is not; a checkpoint tick
// (it only enqueues a persist) is not; a rollback is a persisted event; a final failure is decoded
// to its code and retry intent.
import { describe, expect, it } from 'vitest';
import { encodeFailure } from '../../src/errors/failure-codec.js';
import { StaleGenerationError } from '../../src/errors/stale-generation-error.js';
import { completionEvent, failureEvent } from '../../src/status/job-events.js';

const provision = { workspaceId: 'ws', handle: 'h', generation: 2, hostId: 'local', provider: 'local', outcome: 'restored', source: 'r1' };
const persist = { workspaceId: 'ws', revision: 'r2', generation: 2, files: 3, bytes: 9, changedFiles: 1, deletedFiles: 0, unchanged: false, durationMs: 5, coveredSeq: 1 };

describe('job events', () => {
  it('a new incarnation is provisioned; a reused one is nothing', () => {
    expect(completionEvent('provision', 'provision', { workspaceId: 'ws' }, provision)).toEqual({ type: 'provisioned', workspaceId: 'ws', generation: 2, handle: 'h', hostId: 'local', provider: 'local', outcome: 'restored', source: 'r1' });
    expect(completionEvent('provision', 'provision', { workspaceId: 'ws' }, { ...provision, outcome: 'reused' })).toBeNull();
  });

  it('persists are persisted events with the payload reason and turn; unchanged checkpoints and checkpoint ticks are not', () => {
    expect(completionEvent('persist', 'persist', { reason: 'turn-end', turnId: 't9' }, { ...persist, unchanged: true })).toMatchObject({ type: 'persisted', revision: 'r2', reason: 'turn-end', turnId: 't9' });
    expect(completionEvent('persist', 'persist', { reason: 'checkpoint' }, persist)).toMatchObject({ type: 'persisted', reason: 'checkpoint', turnId: null });
    expect(completionEvent('persist', 'persist', { reason: 'checkpoint' }, { ...persist, unchanged: true })).toBeNull();
    expect(completionEvent('persist', 'persist', { reason: 'turn-end' }, { ...persist, revision: null })).toBeNull();
    expect(completionEvent('checkpoint', 'checkpoint', { workspaceId: 'ws' }, { persistJobId: '1', seq: 2 })).toBeNull();
    expect(completionEvent('persist', 'rollback', { workspaceId: 'ws' }, { workspaceId: 'ws', revision: 'r3', restoredFrom: 'r1', generation: 2, files: 4, durationMs: 1 })).toMatchObject({ type: 'persisted', revision: 'r3', reason: 'rollback', files: 4 });
    expect(completionEvent('gc', 'gc', {}, { removed: 1 })).toBeNull();
  });

  it('a final failure carries the decoded code, message and retry intent, and the workspace when the payload names one', () => {
    const reason = encodeFailure(new StaleGenerationError('ws', 1, 2));
    expect(failureEvent('persist@local', '7', { workspaceId: 'ws' }, reason)).toEqual({ type: 'failed', workspaceId: 'ws', queue: 'persist@local', jobId: '7', code: 'StaleGeneration', message: expect.stringContaining('ws'), retryable: false });
    expect(failureEvent('gc', '8', { kind: 'litter' }, 'plain text failure')).toMatchObject({ workspaceId: null, code: expect.any(String) });
  });
});
