/**
 * `FLEET_GC_SCHEDULE`: when each GC kind's job scheduler runs: milliseconds between runs, a cron
 * pattern in parentheses (BullMQ job schedulers take cron patterns: `retention=(0 3 * * *)`, UTC),
 * or `off`. Commas inside the parentheses belong to the pattern (`(0,30 * * * *)`).
 */
import { CronExpressionParser } from 'cron-parser';
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
export type GcKindName = keyof typeof GC_SCHEDULE_DEFAULTS;
/** Milliseconds between runs (0 = off), or a cron pattern. */
export type GcScheduleEntry = number | string;
export type GcScheduleMap = Readonly<Record<GcKindName, GcScheduleEntry>>;

/** Kinds run by each host's own timer, not a BullMQ scheduler: they take milliseconds only. */
const TIMER_KINDS: ReadonlySet<string> = new Set(['orphans']);

// A schedule spelled as the variable takes it.
const renderSchedule = (schedule: GcScheduleMap): string =>
  Object.entries(schedule)
    .map(([kind, value]) => `${kind}=${typeof value === 'string' ? `(${value})` : value === 0 ? 'off' : value}`)
    .join(',');

/** The entries of the list: split on commas outside parentheses. */
export function splitSchedule(raw: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const char of raw) {
    if (char === '(') depth += 1;
    if (char === ')') depth -= 1;
    if (char === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else current += char;
  }
  parts.push(current);
  return parts.map((p) => p.trim()).filter(Boolean);
}

/** Whether `pattern` is a cron pattern BullMQ's scheduler accepts (5 or 6 fields). */
export function isCronPattern(pattern: string): boolean {
  if (!/^[0-9A-Za-z*/,\- ?#LW]{1,100}$/.test(pattern) || pattern.trim().split(/\s+/).length < 5) return false;
  try {
    CronExpressionParser.parse(pattern, { tz: 'UTC' });
    return true;
  } catch {
    return false;
  }
}

/** `kind=ms|(cron)|off,...` over the defaults; an interval under 1 s is refused (it would hammer Redis). */
export function gcSchedule(): EnvField<GcScheduleMap> {
  return field<GcScheduleMap>(
    `a comma-separated list of kind=milliseconds|(cron pattern)|off with kinds ${Object.keys(GC_SCHEDULE_DEFAULTS).join(', ')} (orphans: milliseconds or off)`,
    (raw) => {
      const out: Record<string, GcScheduleEntry> = { ...GC_SCHEDULE_DEFAULTS };
      for (const part of splitSchedule(raw)) {
        const match = /^([a-z]+)=(off|\d+|\((.+)\))$/.exec(part);
        if (!match || !(match[1]! in GC_SCHEDULE_DEFAULTS)) return undefined;
        const [, kind, value, pattern] = match;
        if (pattern !== undefined) {
          if (TIMER_KINDS.has(kind!) || !isCronPattern(pattern.trim())) return undefined;
          out[kind!] = pattern.trim();
          continue;
        }
        const ms = value === 'off' ? 0 : Number(value);
        if (ms !== 0 && ms < 1_000) return undefined;
        out[kind!] = ms;
      }
      return Object.freeze(out) as GcScheduleMap;
    },
    GC_SCHEDULE_DEFAULTS,
    renderSchedule,
  );
}
