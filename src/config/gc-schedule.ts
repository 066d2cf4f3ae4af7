/** `FLEET_GC_SCHEDULE`: milliseconds between runs of each GC kind's job scheduler (0 = off). */
import { field, type EnvField } from './env-field.js';

/** GC kinds and their default schedule (ms between runs; 0 = off). */
export const GC_SCHEDULE_DEFAULTS = Object.freeze({
  unattached: 3_600_000,
  retention: 3_600_000,
  litter: 3_600_000,
  bases: 86_400_000,
  orphans: 600_000,
  idle: 60_000,
  objects: 3_600_000,
  verify: 86_400_000,
});
export type GcScheduleMap = Readonly<Record<keyof typeof GC_SCHEDULE_DEFAULTS, number>>;

// A schedule spelled as the variable takes it: `kind=ms|off,...`.
const renderSchedule = (schedule: GcScheduleMap): string =>
  Object.entries(schedule)
    .map(([kind, ms]) => `${kind}=${ms === 0 ? 'off' : ms}`)
    .join(',');

/** `kind=ms|off,...` over the defaults; an interval under 1 s is refused (it would hammer Redis). */
export function gcSchedule(): EnvField<GcScheduleMap> {
  return field<GcScheduleMap>(
    `a comma-separated list of kind=milliseconds|off with kinds ${Object.keys(GC_SCHEDULE_DEFAULTS).join(', ')}`,
    (raw) => {
      const out: Record<string, number> = { ...GC_SCHEDULE_DEFAULTS };
      for (const part of raw.split(',').map((p) => p.trim()).filter(Boolean)) {
        const match = /^([a-z]+)=(off|\d+)$/.exec(part);
        if (!match || !(match[1]! in GC_SCHEDULE_DEFAULTS)) return undefined;
        const ms = match[2] === 'off' ? 0 : Number(match[2]);
        if (ms !== 0 && ms < 1_000) return undefined;
        out[match[1]!] = ms;
      }
      return Object.freeze(out) as GcScheduleMap;
    },
    GC_SCHEDULE_DEFAULTS,
    renderSchedule,
  );
}
