import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { isCronPattern, splitSchedule } from '../../src/config/gc-schedule.js';

const schedule = (raw: string) => loadConfig({ FLEET_GC_SCHEDULE: raw }, '/x').retention.gcSchedule;

describe('FLEET_GC_SCHEDULE', () => {
  it('takes milliseconds, off, and cron patterns in parentheses (commas inside belong to the pattern)', () => {
    expect(schedule('retention=(0 3 * * *),litter=off,objects=(0,30 * * * *),idle=120000')).toMatchObject({ retention: '0 3 * * *', litter: 0, objects: '0,30 * * * *', idle: 120_000, verify: 86_400_000 });
    expect(splitSchedule('a=(1,2 * * * *), b=3 ,,c=off')).toEqual(['a=(1,2 * * * *)', 'b=3', 'c=off']);
  });

  it.each([
    ['retention=(61 * * * *)', 'a minute that does not exist'],
    ['retention=(every day)', 'words'],
    ['retention=(* * *)', 'too few fields'],
    ['orphans=(*/5 * * * *)', 'orphans runs on each host’s timer'],
    ['retention=(0 3 * * *', 'an unclosed parenthesis'],
    ['retention=500', 'under a second'],
  ])('refuses %s (%s), naming the variable and the value', (raw) => {
    expect(() => schedule(raw)).toThrow(`FLEET_GC_SCHEDULE: expected a comma-separated list of kind=milliseconds|(cron pattern)|off`);
    expect(() => schedule(raw)).toThrow(raw);
  });

  it('knows a cron pattern from anything else', () => {
    expect(['*/5 * * * *', '0 0 3 * * *', '0 9 * * MON-FRI'].map(isCronPattern)).toEqual([true, true, true]);
    expect(['', '* * * *', '0 3 * * * * * *', '$(reboot) * * * *', '99 * * * *'].map(isCronPattern)).toEqual([false, false, false, false, false]);
  });
});
