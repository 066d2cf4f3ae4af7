// The rotating read-data-subset windows: p % of the id space each, consecutive windows cover it once.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ID_SPACE, inWindow, windowLabel, windowWidth } from '../../src/archive/id-window.js';

const ids = Array.from({ length: 10_000 }, (_, i) => createHash('sha256').update(String(i)).digest('hex'));

describe('id windows', () => {
  it('100 consecutive 1 % windows hold every id exactly once, each about 1 % of them', () => {
    const width = windowWidth(1);
    const seen = new Map<string, number>();
    let start = 0;
    for (let run = 0; run < 100; run++) {
      const window = { start, width };
      const picked = ids.filter((id) => inWindow(window, id));
      expect(picked.length, `run ${run}`).toBeGreaterThan(50);
      expect(picked.length, `run ${run}`).toBeLessThan(150);
      for (const id of picked) seen.set(id, (seen.get(id) ?? 0) + 1);
      start = (start + width) % ID_SPACE;
    }
    expect(seen.size).toBe(ids.length);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
  });

  it('wraps past the end of the space; 100 % is every id; labels are hex prefixes', () => {
    const window = { start: ID_SPACE - 10, width: 20 };
    expect(inWindow(window, 'fffffff7' + '0'.repeat(56))).toBe(true);
    expect(inWindow(window, '00000009' + '0'.repeat(56))).toBe(true);
    expect(inWindow(window, '0000000a' + '0'.repeat(56))).toBe(false);
    expect(ids.every((id) => inWindow({ start: 12345, width: windowWidth(100) }, id))).toBe(true);
    expect(windowLabel(window)).toEqual({ from: 'fffffff6', to: '0000000a' });
    expect(windowWidth(0.000000001)).toBe(1);
  });
});
