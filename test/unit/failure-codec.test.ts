import { describe, expect, it } from 'vitest';
import { decodeFailure, encodeFailure } from '../../src/errors/failure-codec.js';
import { StaleGenerationError } from '../../src/errors/stale-generation-error.js';

describe('failure codec', () => {
  it('round-trips a fleet error code and message', () => {
    const encoded = encodeFailure(new StaleGenerationError('ws', 1, 2));
    const decoded = decodeFailure('persist@local', '7', encoded);
    expect(decoded.code).toBe('StaleGeneration');
    expect(decoded.message).toBe('workspace ws: generation 1 is stale (current 2)');
    expect(decoded.jobId).toBe('7');
  });

  it('marks foreign errors as Unexpected and BullMQ stalls as Stalled', () => {
    expect(decodeFailure('q', '1', encodeFailure(new Error('boom'))).code).toBe('Unexpected');
    expect(decodeFailure('q', '1', 'job stalled more than allowable limit').code).toBe('Stalled');
    expect(decodeFailure('q', '1', 'lowercase thing').code).toBe('JobFailed');
    expect(decodeFailure('q', '1', undefined).code).toBe('JobFailed');
  });
});
