// Listings are read far more often than messages change. A page is kept
// until something may have changed it: a write (in this process or another
// one on the same database) or the clock reaching the next start or expiry,
// which moves messages between the D19 windows. D51: the cache is bounded in
// bytes, not entries, since one page may hold a thousand 4,000-character
// bodies; the least recently used pages go first.
export interface ChangeSource {
  /** Differs whenever the data may have changed since it was last read: costs no query. */
  changeMark(): string;
  /** The first second after `now` at which the answer may change by the clock alone, or Infinity. */
  nextChangeAfter(now: number): Promise<number>;
}

interface Entry<V> {
  value: V;
  bytes: number;
}

export class ListingCache<V> {
  /** In order of use, least recent first (a Map keeps insertion order). */
  private readonly entries = new Map<string, Entry<V>>();
  private bytes = 0;
  private mark = "";
  private validFrom = Infinity;
  private validUntil = -Infinity;

  /**
   * @param maxBytes the bound; a value larger than it alone is computed each time, never kept
   * @param sizeOf an estimate of the bytes a value holds, erring high
   */
  constructor(
    private readonly source: ChangeSource,
    private readonly maxBytes: number,
    private readonly sizeOf: (value: V) => number,
    /** Told of each hit, miss and eviction (the metrics, D43). */
    private readonly onEvent: (event: "hit" | "miss" | "eviction") => void = () => {},
  ) {}

  /** The cached value for `key` at time `now` (seconds), computing it on a miss; errors are not cached. */
  async get(key: string, now: number, compute: () => Promise<V>): Promise<V> {
    // Read before anything is computed: a page computed while a write lands
    // is then kept under the old mark, which the next get discards.
    const mark = this.source.changeMark();
    // A clock set back is as much a change as one that moved forward past a boundary.
    if (mark !== this.mark || now < this.validFrom || now >= this.validUntil) {
      const validUntil = await this.source.nextChangeAfter(now);
      if (mark !== this.source.changeMark()) return compute(); // changed meanwhile: serve, keep nothing
      this.entries.clear();
      this.bytes = 0;
      this.mark = mark;
      this.validFrom = now;
      this.validUntil = validUntil;
    }
    const hit = this.entries.get(key);
    if (hit !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, hit);
      this.onEvent("hit");
      return hit.value;
    }
    this.onEvent("miss");
    const value = await compute();
    const bytes = 2 * key.length + this.sizeOf(value);
    // Kept only if nothing changed (and no other get reset the window) while it was computed.
    if (bytes <= this.maxBytes && this.mark === mark && this.source.changeMark() === mark && now >= this.validFrom && now < this.validUntil) {
      const twin = this.entries.get(key); // a concurrent miss of the same key got there first
      if (twin !== undefined) {
        this.entries.delete(key);
        this.bytes -= twin.bytes;
      }
      this.entries.set(key, { value, bytes });
      this.bytes += bytes;
      for (const [k, e] of this.entries) {
        if (this.bytes <= this.maxBytes) break;
        this.entries.delete(k);
        this.bytes -= e.bytes;
        this.onEvent("eviction");
      }
    }
    return value;
  }

  /** Bytes held, as estimated by sizeOf. */
  get size(): number {
    return this.bytes;
  }
}
