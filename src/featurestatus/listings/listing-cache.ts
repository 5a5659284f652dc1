// Listings are read far more often than messages change. A page is kept
// until something may have changed it: a write (in this process or another
// one on the same database) or the clock reaching the next start or expiry,
// which moves messages between the D19 windows. D51: the cache is bounded in
// bytes, not entries, since one page may hold a thousand 4,000-character
// bodies; the least recently used pages go first, and what it drops is
// collected once it adds up to the bound (runtime/garbage.ts).
import { ReleasedBytes } from "../../runtime/garbage.js";

export interface ChangeSource {
  /**
   * Differs whenever the data may have changed since it was last read: costs no query.
   * Undefined when changes cannot be told now (PostgreSQL's change feed is down, D40): nothing is served from the cache or kept.
   */
  changeMark(): string | undefined;
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
  /** Computations under way, by key, with the mark they started at. */
  private readonly loading = new Map<string, { mark: string; value: Promise<V> }>();
  private renewing: { mark: string; now: number; done: Promise<boolean> } | undefined;
  /** Bytes dropped (evicted, or cleared by a change) since V8 last collected them. */
  private readonly released: ReleasedBytes;

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
  ) {
    this.released = new ReleasedBytes(maxBytes);
  }

  /** The cached value for `key` at time `now` (seconds), computing it on a miss; errors are not cached. */
  async get(key: string, now: number, compute: () => Promise<V>): Promise<V> {
    // Read before anything is computed: a page computed while a write lands
    // is then kept under the old mark, which the next get discards.
    const mark = this.source.changeMark();
    if (mark === undefined) return compute();
    // A clock set back is as much a change as one that moved forward past a boundary.
    if (mark !== this.mark || now < this.validFrom || now >= this.validUntil) {
      if (!(await this.renew(mark, now))) return compute(); // changed meanwhile: serve, keep nothing
    }
    const hit = this.entries.get(key);
    if (hit !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, hit);
      this.onEvent("hit");
      return hit.value;
    }
    // Callers that miss the same key at once (watchers woken by one write, D46) share one computation.
    const loading = this.loading.get(key);
    if (loading?.mark === mark) {
      this.onEvent("hit");
      return loading.value;
    }
    this.onEvent("miss");
    const pending = compute();
    this.loading.set(key, { mark, value: pending });
    let value: V;
    try {
      value = await pending;
    } finally {
      if (this.loading.get(key)?.value === pending) this.loading.delete(key);
    }
    const bytes = 2 * key.length + this.sizeOf(value);
    // Kept only if nothing changed (and no other get reset the window) while it was computed.
    if (
      bytes <= this.maxBytes &&
      this.mark === mark &&
      this.source.changeMark() === mark &&
      now >= this.validFrom &&
      now < this.validUntil
    ) {
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
        this.released.add(e.bytes);
        this.onEvent("eviction");
      }
    }
    return value;
  }

  /** Starts a new window at `mark` and `now` (one query, shared by the callers that need it at once); false if the data changed meanwhile. */
  private renew(mark: string, now: number): Promise<boolean> {
    if (this.renewing?.mark === mark && this.renewing.now === now) return this.renewing.done;
    const done = (async () => {
      const validUntil = await this.source.nextChangeAfter(now);
      if (mark !== this.source.changeMark()) return false;
      this.entries.clear();
      this.released.add(this.bytes);
      this.bytes = 0;
      this.mark = mark;
      this.validFrom = now;
      this.validUntil = validUntil;
      return true;
    })();
    const renewing = { mark, now, done };
    this.renewing = renewing;
    void done.finally(() => this.renewing === renewing && (this.renewing = undefined)).catch(() => {});
    return done;
  }

  /** Bytes held, as estimated by sizeOf. */
  get size(): number {
    return this.bytes;
  }
}
