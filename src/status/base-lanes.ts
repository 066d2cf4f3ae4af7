/**
 * The base registry by lane (`fleet base list`): per provider and lane, the active base, its
 * rollback target, the candidates (baked, not yet tested) and every base's workspace references
 * and time since it was rotated out. Pure: the caller reads the entries and reference counts.
 */
import type { BaseEntry } from '../state/base-registry.js';

export interface LaneView {
  readonly provider: string;
  readonly lane: string;
  readonly active: string | null;
  /** The rollback target: what `fleet base rollback <lane>` would re-activate. */
  readonly previous: string | null;
  readonly candidates: readonly string[];
  /** Bases of the lane by status (retired ones included). */
  readonly counts: Readonly<Record<string, number>>;
}

export interface BaseView extends BaseEntry {
  /** Workspaces that started from it (the provenance index). */
  readonly references: number;
  /** ms since it stopped being active or the rollback target; null when it never did (or still is). */
  readonly sinceRotationMs: number | null;
}

export function baseViews(entries: readonly BaseEntry[], references: ReadonlyMap<string, number>, now: number): BaseView[] {
  return entries.map((e) => ({ ...e, references: references.get(e.snapshotId) ?? 0, sinceRotationMs: e.rotatedAt === null ? null : Math.max(0, now - e.rotatedAt) }));
}

export function laneViews(entries: readonly BaseEntry[]): LaneView[] {
  const lanes = new Map<string, BaseEntry[]>();
  for (const e of entries) {
    const key = `${e.provider}:${e.lane}`;
    lanes.set(key, [...(lanes.get(key) ?? []), e]);
  }
  return [...lanes.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([, list]) => {
      const active = list.find((e) => e.active) ?? null;
      const counts: Record<string, number> = {};
      for (const e of list) counts[e.status] = (counts[e.status] ?? 0) + 1;
      return {
        provider: list[0]!.provider,
        lane: list[0]!.lane,
        active: active?.snapshotId ?? null,
        previous: active?.previousSnapshotId ?? null,
        candidates: list.filter((e) => e.status === 'candidate').map((e) => e.snapshotId),
        counts,
      };
    });
}

/** "3d 4h", "5h 2m", "40s": a duration for a table cell. */
export function shortDuration(ms: number): string {
  const s = Math.floor(ms / 1000);
  const d = Math.floor(s / 86_400);
  const h = Math.floor((s % 86_400) / 3_600);
  const m = Math.floor((s % 3_600) / 60);
  if (d > 0) return `${d}d ${h}h`;
  if (h > 0) return `${h}h ${m}m`;
  if (m > 0) return `${m}m ${s % 60}s`;
  return `${s}s`;
}
