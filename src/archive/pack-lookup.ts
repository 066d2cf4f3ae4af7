/**
 * Which pack holds an object, across every pack index a store has read (pack-index.ts): a hash
 * table keyed by the first 31 bits of the id, each key naming the pack (or, rarely, the packs)
 * whose index then confirms the whole id and gives the slot. About 40 bytes per object beside the
 * indexes themselves (48), where a map from id strings would be over 100; packs are added one at
 * a time as they are found, in O(their objects).
 */
import type { PackIndex, PackSlot } from './pack-index.js';

export interface Located {
  readonly index: PackIndex;
  readonly slot: PackSlot;
}

export class PackLookup {
  /** By pack number; null for a pack removed (its number is never used again). */
  readonly #indexes: (PackIndex | null)[] = [];
  readonly #byPackId = new Map<string, number>();
  /** Key → pack number, or −1 − n for `#shared[n]` (the packs of a key several hold). */
  readonly #table = new Map<number, number>();
  readonly #shared: number[][] = [];

  /** Packs known (added and not removed). */
  get packs(): number {
    return this.#byPackId.size;
  }

  has(packId: string): boolean {
    return this.#byPackId.has(packId);
  }

  /** Adds a pack's index (a pack added already is ignored). */
  add(index: PackIndex): void {
    if (this.#byPackId.has(index.packId)) return;
    const pack = this.#indexes.length;
    this.#indexes.push(index);
    this.#byPackId.set(index.packId, pack);
    for (const object of index.objects()) {
      const key = keyOf(object.id);
      const held = this.#table.get(key);
      if (held === undefined) this.#table.set(key, pack);
      else if (held >= 0) {
        if (held === pack) continue;
        this.#shared.push([held, pack]);
        this.#table.set(key, -this.#shared.length);
      } else {
        const list = this.#shared[-1 - held]!;
        if (!list.includes(pack)) list.push(pack);
      }
    }
  }

  /**
   * Forgets a pack (the GC removed it: its objects are in another pack now, or unreachable), in
   * O(its objects): its keys leave the table, or the lists of the packs sharing them. A pack added
   * again later gets a new number.
   */
  remove(packId: string): void {
    const pack = this.#byPackId.get(packId);
    if (pack === undefined) return;
    const index = this.#indexes[pack]!;
    this.#byPackId.delete(packId);
    this.#indexes[pack] = null;
    for (const object of index.objects()) {
      const key = keyOf(object.id);
      const held = this.#table.get(key);
      if (held === pack) this.#table.delete(key);
      else if (held !== undefined && held < 0) {
        const list = this.#shared[-1 - held]!;
        const at = list.indexOf(pack);
        if (at >= 0) list.splice(at, 1);
        // A list of one is left as it is (found the same way); an empty one names no pack.
      }
    }
  }

  /** The pack holding object `id` (lower-case hex) and where, or undefined. */
  find(id: string): Located | undefined {
    const held = this.#table.get(keyOf(id));
    if (held === undefined) return undefined;
    for (const pack of held >= 0 ? [held] : this.#shared[-1 - held]!) {
      const index = this.#indexes[pack];
      const slot = index?.find(id);
      if (slot) return { index: index!, slot };
    }
    return undefined;
  }
}

// The first 31 bits of a hex id (a small integer: V8 keeps it unboxed).
function keyOf(id: string): number {
  return Number.parseInt(id.slice(0, 8), 16) >>> 1;
}
