// Unknown FLEET_* variables (unknown-variables.ts): reported, with the known name a typo most
// likely meant; known names, other prefixes and unrelated names get no suggestion.
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES } from '../../src/config.js';
import { editDistance, unknownVariables, unknownVariableWarning } from '../../src/config/unknown-variables.js';

describe('unknownVariables', () => {
  it('names each unknown FLEET_ variable with the nearest known one when it is a likely typo', () => {
    const env = {
      FLEET_CHECKPOINT_INTERVAL: '5000',
      FLEET_PERSIT_CHANGE_SCAN: 'false',
      FLEET_ADMIN_PASWORD: 'x',
      FLEET_COMPLETELY_DIFFERENT_THING: '1',
      FLEET_PROVIDER: 'local',
      REDIS_URLL: 'redis://h',
      PATH: '/bin',
    };
    expect(unknownVariables(env, CONFIG_VARIABLES)).toEqual([
      { name: 'FLEET_ADMIN_PASWORD', suggestion: 'FLEET_ADMIN_PASSWORD' },
      { name: 'FLEET_CHECKPOINT_INTERVAL', suggestion: 'FLEET_CHECKPOINT_INTERVAL_MS' },
      { name: 'FLEET_COMPLETELY_DIFFERENT_THING', suggestion: null },
      { name: 'FLEET_PERSIT_CHANGE_SCAN', suggestion: 'FLEET_PERSIST_CHANGE_SCAN' },
    ]);
    expect(unknownVariables({ FLEET_PROVIDER: 'local', FLEET_HOME: '/x' }, CONFIG_VARIABLES)).toEqual([]);
  });

  it('words the warning with the suggestion, and without one when nothing is close', () => {
    expect(unknownVariableWarning({ name: 'FLEET_PERSIT_CHANGE_SCAN', suggestion: 'FLEET_PERSIST_CHANGE_SCAN' })).toBe(
      'warning: FLEET_PERSIT_CHANGE_SCAN is not a variable the fleet reads and is ignored (did you mean FLEET_PERSIST_CHANGE_SCAN?); `fleet env` lists them',
    );
    expect(unknownVariableWarning({ name: 'FLEET_X', suggestion: null })).not.toContain('did you mean');
  });

  it('edit distance: insertions, deletions and substitutions', () => {
    expect(editDistance('', '')).toBe(0);
    expect(editDistance('abc', 'abc')).toBe(0);
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('FLEET_HOME', 'FLEET_HOM')).toBe(1);
  });
});
