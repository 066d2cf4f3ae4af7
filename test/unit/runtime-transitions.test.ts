// The runtime state machine as a pure table (the scripts enforce the same rules).
import { describe, expect, it } from 'vitest';
import { RUNTIME_TRANSITIONS, transitionAllowed, type RecordFacts } from '../../src/state/runtime-transitions.js';

const NOW = 1_000_000;
const STALE_BEFORE = NOW - 300_000;
const record = (state: RecordFacts['state'], generation = 0, updatedAt = NOW): RecordFacts => ({ state, generation, updatedAt });
const allowed = (name: keyof typeof RUNTIME_TRANSITIONS, r: RecordFacts, generation: number, counter = generation) =>
  transitionAllowed(RUNTIME_TRANSITIONS[name], r, generation, counter, STALE_BEFORE);

describe('runtime transitions', () => {
  it('begin starts a newer generation over any state, only at the counter', () => {
    for (const state of ['none', 'pending', 'provisioning', 'ready', 'stopped', 'error'] as const) expect(allowed('begin', record(state, 1), 2), state).toBe(true);
    expect(allowed('begin', record('ready', 2), 2)).toBe(false);
    expect(allowed('begin', record('ready', 1), 2, 3)).toBe(false);
  });

  it('handle, ready and fail act on their own generation provisioning only', () => {
    expect(allowed('ready', record('provisioning', 2), 2)).toBe(true);
    expect(allowed('ready', record('provisioning', 3), 2)).toBe(false);
    expect(allowed('ready', record('ready', 2), 2)).toBe(false);
    expect(allowed('handle', record('provisioning', 2), 2, 3)).toBe(false);
    expect(allowed('fail', record('provisioning', 2), 2, 3)).toBe(true);
    expect(allowed('fail', record('ready', 3), 2)).toBe(false);
  });

  it('confirm never overwrites a newer provisioning at work, but does a newer failed or dead attempt', () => {
    expect(allowed('confirm', record('none'), 1)).toBe(true);
    expect(allowed('confirm', record('stopped', 1), 1, 2)).toBe(true);
    expect(allowed('confirm', record('provisioning', 2), 1, 2)).toBe(false);
    expect(allowed('confirm', record('provisioning', 2, STALE_BEFORE - 1), 1, 2)).toBe(true);
    expect(allowed('confirm', record('error', 2), 1, 2)).toBe(true);
    expect(allowed('confirm', record('ready', 2), 1, 2)).toBe(false);
  });

  it('stop takes only a ready incarnation of its generation', () => {
    expect(allowed('stop', record('ready', 1), 1, 2)).toBe(true);
    expect(allowed('stop', record('ready', 2), 1, 2)).toBe(false);
    expect(allowed('stop', record('provisioning', 1), 1)).toBe(false);
  });

  it('upgrade records a new template version on the ready incarnation of its generation only, while it is the current one', () => {
    expect(allowed('upgrade', record('ready', 3), 3)).toBe(true);
    // A newer generation was begun meanwhile (counter moved): the upgraded tree is not the workspace's any more.
    expect(allowed('upgrade', record('ready', 3), 3, 4)).toBe(false);
    expect(allowed('upgrade', record('stopped', 3), 3)).toBe(false);
    expect(allowed('upgrade', record('ready', 4), 3, 4)).toBe(false);
  });
});
