// D66 group commit on SQLite: the writes that arrive together share one
// IMMEDIATE transaction and one fsync (synchronous=FULL), each in a savepoint
// of its own, so that one failing is rolled back alone and its companions
// still commit. A write waits for companions only until the event loop has
// read what already arrived (setImmediate runs after the I/O phase): the
// requests that came in while the last commit held the loop. Nothing is
// acknowledged before the commit returns; a failed commit fails every write
// of the group, none of which is then stored.
import type { Db } from "./database.js";

interface Waiting {
  work: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** What became of one write of a group: its result, or the error its savepoint was rolled back with. */
type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export class GroupCommit {
  private waiting: Waiting[] = [];
  private scheduled = false;
  /** Writes in each committed group, for the metrics. */
  onGroup?: (writes: number) => void;

  constructor(private readonly db: Db) {}

  /**
   * Runs `work` (synchronous statements on this connection) in the next
   * group's transaction; resolves with its result once the group committed.
   * Work that throws is rolled back to its savepoint and rejects alone.
   */
  run<T>(work: () => T): Promise<T> {
    // Called inside a transaction of this connection (an import's publish, a seed): the work belongs to that transaction, now.
    if (this.db.inTransaction) {
      try {
        return Promise.resolve(this.db.transaction(work)());
      } catch (error) {
        return Promise.reject(error);
      }
    }
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.commit());
      }
    });
  }

  private commit(): void {
    this.scheduled = false;
    const group = this.waiting;
    this.waiting = [];
    let outcomes: Outcome[];
    try {
      outcomes = this.db
        .transaction(() =>
          group.map((w): Outcome => {
            try {
              // Nested: better-sqlite3 makes it a savepoint, released or rolled back alone.
              return { ok: true, value: this.db.transaction(w.work)() };
            } catch (error) {
              return { ok: false, error };
            }
          }),
        )
        .immediate();
    } catch (error) {
      // BEGIN (the lock: the database retry interceptor tries each write again) or COMMIT failed: nothing of the group is stored.
      for (const w of group) w.reject(error);
      return;
    }
    this.onGroup?.(group.length);
    outcomes.forEach((o, i) => (o.ok ? group[i].resolve(o.value) : group[i].reject(o.error)));
  }
}

const byDb = new WeakMap<Db, GroupCommit>();

/** The group commit of a connection: one per connection, since one connection has one transaction at a time. */
export function groupCommit(db: Db): GroupCommit {
  let g = byDb.get(db);
  if (g === undefined) byDb.set(db, (g = new GroupCommit(db)));
  return g;
}
