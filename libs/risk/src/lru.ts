/**
 * A bounded cache that keeps what was used recently: entries live in a young and an old generation of at most
 * `max / 2` each; a hit in the old generation moves the entry to the young one, and when the young one is full it
 * becomes the old one (whose entries, unused for a whole generation, are dropped). An approximation of
 * least-recently-used eviction that costs one map lookup per hit. The classifier memoises pure functions of text with
 * it (the same button labels, packages and argument names come back call after call), so a hit returns exactly what
 * computing would, and ever-new inputs cannot grow memory without limit.
 */
export class Lru<K, V> {
  private young = new Map<K, V>();
  private old = new Map<K, V>();
  private readonly generation: number;

  constructor(max: number) {
    this.generation = Math.max(1, Math.floor(max / 2));
  }

  get(key: K): V | undefined {
    const value = this.young.get(key);
    if (value !== undefined) return value;
    const aged = this.old.get(key);
    if (aged !== undefined) this.set(key, aged);
    return aged;
  }

  set(key: K, value: V): void {
    if (this.young.size >= this.generation && !this.young.has(key)) {
      this.old = this.young;
      this.young = new Map();
    }
    this.young.set(key, value);
  }

  /** Entries held, at most `max`. */
  get size(): number {
    return this.young.size + this.old.size;
  }
}
