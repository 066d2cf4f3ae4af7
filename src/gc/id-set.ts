/**
 * A set of SHA-256 ids held as their 32 raw bytes (a latin1 string each), half the memory of
 * the hex form: the objects GC marks every object of the archive in one.
 */
export class IdSet {
  readonly #keys = new Set<string>();

  get size(): number {
    return this.#keys.size;
  }

  /** Adds `id` (lower-case hex); true when it was not there yet. */
  add(id: string): boolean {
    const key = Buffer.from(id, 'hex').toString('latin1');
    if (this.#keys.has(key)) return false;
    this.#keys.add(key);
    return true;
  }

  has(id: string): boolean {
    return this.#keys.has(Buffer.from(id, 'hex').toString('latin1'));
  }
}
