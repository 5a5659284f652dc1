// Listings are read far more often than messages change. A page is kept
// until something may have changed it: a write (in this process or another
// one on the same database) or the clock reaching the next start or expiry,
// which moves messages between the D19 windows.
export interface ChangeSource {
  changeMark(): string;
  nextChangeAfter(now: number): number;
}

export class ListingCache<V> {
  private readonly entries = new Map<string, V>();
  private mark = "";
  private validFrom = Infinity;
  private validUntil = -Infinity;

  constructor(
    private readonly source: ChangeSource,
    private readonly maxEntries = 4096,
  ) {}

  /** The cached value for `key` at time `now` (seconds), computing it on a miss; errors are not cached. */
  get(key: string, now: number, compute: () => V): V {
    const mark = this.source.changeMark();
    // A clock set back is as much a change as one that moved forward past a boundary.
    if (mark !== this.mark || now < this.validFrom || now >= this.validUntil) {
      this.entries.clear();
      this.mark = mark;
      this.validFrom = now;
      this.validUntil = this.source.nextChangeAfter(now);
    }
    let value = this.entries.get(key);
    if (value === undefined) {
      value = compute();
      if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(key, value);
    }
    return value;
  }
}
