// What changed in the shared database, as every replica learns it (D40):
// triggers on the shared tables NOTIFY one channel with the table's name at
// each committed write, whoever wrote (a replica, the CLI, psql), and each
// process LISTENs and counts. A cache compares counts instead of asking the
// database on every read.
//
// The listening connection is this feed's own, so that it knows when it is
// lost: from then until LISTEN is in place again a write anywhere may go
// unseen, so there is no mark (caches read through, D40) and, once it is
// back, every mark moves and watchers are told "*" (anything may have
// changed). It is opened again at once, not after the pool's backoff.
import { setTimeout as sleep } from "node:timers/promises";
import { connectListener, type PgOptions, type Sql } from "./database.js";

export const CHANGES_CHANNEL = "meridian_changes";
/** A write to a series' blocks is told as this and the series' sid (not the table's name: caches drop that series alone). */
export const BLOCKS_CHANGED = "blocks:";

/** The pause between two attempts to LISTEN again (postgres.js adds its reconnect backoff). */
const RELISTEN_PAUSE_MS = 100;

export class ChangeFeed {
  private readonly counts = new Map<string, number>();
  private epoch = 0;
  private listening = false;
  /** Counts losses of the connection (and failed attempts to open it). */
  private losses = 0;
  private relistening: Promise<void> | undefined;
  private closed = false;
  private readonly watchers = new Set<(table: string) => void>();
  private readonly links = new Set<(live: boolean) => void>();
  private sql!: Sql;

  private constructor() {
    // made by listen() only, which connects it
  }

  static async listen(o: PgOptions): Promise<ChangeFeed> {
    const feed = new ChangeFeed();
    feed.sql = connectListener(o, {
      notify: (channel, table) => channel === CHANGES_CHANNEL && feed.changed(table),
      close: () => feed.lost(),
    });
    try {
      await feed.sql.unsafe(`LISTEN ${CHANGES_CHANNEL}`);
    } catch (e) {
      feed.closed = true;
      await feed.sql.end({ timeout: 1 });
      throw e;
    }
    feed.listening = true;
    return feed;
  }

  /** Whether every write is being heard; while not, nothing cached may be trusted. */
  get live(): boolean {
    return this.listening;
  }

  /** A token that differs whenever `table` may have changed; undefined while writes may go unheard. */
  mark(table: string): string | undefined {
    return this.listening ? `${this.epoch}:${this.counts.get(table) ?? 0}` : undefined;
  }

  /** Counts a change seen by this process (its own write, before the notification arrives). */
  changed(table: string): void {
    this.counts.set(table, (this.counts.get(table) ?? 0) + 1);
    for (const w of this.watchers) w(table);
  }

  /** Calls fn with the table's name at each change, "*" for anything; returns the unsubscribe. */
  watch(fn: (table: string) => void): () => void {
    this.watchers.add(fn);
    return () => this.watchers.delete(fn);
  }

  /** Calls fn with false when the listening connection is lost, true when it listens again. */
  onLink(fn: (live: boolean) => void): () => void {
    this.links.add(fn);
    return () => this.links.delete(fn);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.sql.end({ timeout: 1 });
  }

  private lost(): void {
    if (this.closed) return;
    this.losses++;
    if (this.listening) {
      this.listening = false;
      this.epoch++; // a mark taken before stays unequal to every later one
      for (const l of this.links) l(false);
    }
    this.relistening ??= this.relisten().finally(() => (this.relistening = undefined));
  }

  private async relisten(): Promise<void> {
    while (!this.closed) {
      const seen = this.losses;
      try {
        await this.sql.unsafe(`LISTEN ${CHANGES_CHANNEL}`);
        if (this.losses === seen) break; // not lost again while LISTEN was answered
      } catch {
        await sleep(RELISTEN_PAUSE_MS);
      }
    }
    if (this.closed) return;
    this.listening = true;
    this.epoch++;
    for (const w of this.watchers) w("*");
    for (const l of this.links) l(true);
  }
}
