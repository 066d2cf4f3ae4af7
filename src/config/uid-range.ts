/** `FLEET_SANDBOX_UID_RANGE`: the uids handed to workspaces, one each. */
import { field, type EnvField } from './env-field.js';

/** Sandbox uids: one per workspace, never 0, never a system or `nobody` (65534) uid. */
export interface UidRange {
  readonly first: number;
  readonly last: number;
}
const UID_MIN = 65_536;
const UID_MAX = 2_147_483_647;

/** `first-last`, both inside [UID_MIN, UID_MAX]. */
export function uidRange(fallback: UidRange): EnvField<UidRange> {
  return field<UidRange>(
    `a range first-last of uids between ${UID_MIN} and ${UID_MAX}, first <= last`,
    (raw) => {
      const match = /^(\d+)-(\d+)$/.exec(raw);
      if (!match) return undefined;
      const [first, last] = [Number(match[1]), Number(match[2])];
      return first >= UID_MIN && last <= UID_MAX && first <= last ? Object.freeze({ first, last }) : undefined;
    },
    Object.freeze({ ...fallback }),
    (range) => `${range.first}-${range.last}`,
  );
}
