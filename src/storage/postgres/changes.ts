// What changed in the shared database, as every replica learns it (D40):
// triggers on the shared tables NOTIFY one channel with the table's name at
// each committed write, whoever wrote (a replica, the CLI, psql), and each
// process LISTENs and counts. A cache compares counts instead of asking the
// database on every read. After the listening connection is lost, anything
// may have changed unseen, so every count moves when it is back.
import type { Sql } from "./connect.js";

export const CHANGES_CHANNEL = "meridian_changes";

export class ChangeFeed {
  private readonly counts = new Map<string, number>();
  private epoch = 0;
  private readonly watchers = new Set<(table: string) => void>();

  private constructor() {}

  static async listen(sql: Sql): Promise<ChangeFeed> {
    const feed = new ChangeFeed();
    let first = true;
    await sql.listen(
      CHANGES_CHANNEL,
      (table) => feed.changed(table),
      () => {
        // Called on the first LISTEN and after each reconnect.
        if (!first) feed.changedAll();
        first = false;
      },
    );
    return feed;
  }

  /** A token that differs whenever `table` may have changed. */
  mark(table: string): string {
    return `${this.epoch}:${this.counts.get(table) ?? 0}`;
  }

  /** Counts a change seen by this process (its own write, before the notification arrives). */
  changed(table: string): void {
    this.counts.set(table, (this.counts.get(table) ?? 0) + 1);
    for (const w of this.watchers) w(table);
  }

  /** Calls fn with the table's name at each change; returns the unsubscribe. */
  watch(fn: (table: string) => void): () => void {
    this.watchers.add(fn);
    return () => this.watchers.delete(fn);
  }

  private changedAll(): void {
    this.epoch++;
    for (const w of this.watchers) w("*");
  }
}
