// Messages in SQLite. Each call is one statement or one transaction, run
// synchronously: a busy database fails it whole (storage/busy-retry.ts).
import type { Statement } from "better-sqlite3";
import type { Db } from "../storage/database.js";
import { MAX_MESSAGE_ID, type ListQuery, type MessageData, type MessageRow, type MessageStore } from "./message-store.js";
import { listingParams, listingShape, listingSql } from "./listing-sql.js";

export class SqliteMessageStore implements MessageStore {
  private readonly listStatements = new Map<string, Statement>();
  /** Writes through this store; SQLite's data_version counts only other connections' commits. */
  private writes = 0;
  private readonly watchers = new Set<() => void>();
  private readonly dataVersionStmt;
  private readonly nextChangeStmt;
  private readonly insertStmt;
  private readonly getStmt;
  private readonly updateStmt;
  private readonly deleteStmt;
  private readonly purgeStmt;

  constructor(private readonly db: Db) {
    this.insertStmt = db.prepare<MessageData, MessageRow>(
      "INSERT INTO messages (feature_id, type, title, body, start_date, expiring_date) VALUES (@feature_id, @type, @title, @body, @start_date, @expiring_date) RETURNING *",
    );
    this.getStmt = db.prepare<[number], MessageRow>("SELECT * FROM messages WHERE id = ?");
    this.updateStmt = db.prepare<MessageRow, MessageRow>(
      "UPDATE messages SET type = @type, title = @title, body = @body, start_date = @start_date, expiring_date = @expiring_date, version = version + 1 WHERE id = @id AND version = @version RETURNING *",
    );
    this.deleteStmt = db.prepare<{ id: number; version: number | null }>("DELETE FROM messages WHERE id = @id AND (@version IS NULL OR version = @version)");
    this.purgeStmt = db.prepare<[number]>("DELETE FROM messages WHERE expiring_date < ?");
    this.dataVersionStmt = db.prepare("PRAGMA data_version").pluck();
    this.nextChangeStmt = db
      .prepare<{ now: number }>(
        // The aggregate min skips a NULL side (no later start, or no later expiry); min(a, b) would be NULL.
        "SELECT min(t) FROM (SELECT min(start_date) AS t FROM messages WHERE start_date > @now UNION ALL SELECT min(expiring_date) FROM messages WHERE expiring_date > @now)",
      )
      .pluck();
  }

  /** Changes whenever the messages may have changed, by this process or any other. */
  changeMark(): string {
    return `${this.writes}:${this.dataVersionStmt.get()}`;
  }

  /** The first second after `now` at which some message starts or expires (D19 windows move), or Infinity. */
  async nextChangeAfter(now: number): Promise<number> {
    return (this.nextChangeStmt.get({ now }) as number | null) ?? Infinity;
  }

  async insert(data: MessageData): Promise<MessageRow> {
    this.writes++;
    const row = this.db.transaction(() => {
      const row = this.insertStmt.get(data)!;
      if (row.id > MAX_MESSAGE_ID) throw new Error("message ids are exhausted");
      return row;
    })();
    this.changed();
    return row;
  }

  async get(id: number): Promise<MessageRow | undefined> {
    return this.getStmt.get(id);
  }

  async update(row: MessageRow): Promise<MessageRow | undefined> {
    this.writes++;
    const out = this.updateStmt.get(row);
    if (out) this.changed();
    return out;
  }

  async delete(id: number, version?: number): Promise<boolean> {
    this.writes++;
    const deleted = this.deleteStmt.run({ id, version: version ?? null }).changes > 0;
    if (deleted) this.changed();
    return deleted;
  }

  async purgeExpiredBefore(cutoff: number): Promise<number> {
    this.writes++;
    const n = this.purgeStmt.run(cutoff).changes;
    if (n > 0) this.changed();
    return n;
  }

  watch(fn: () => void): () => void {
    this.watchers.add(fn);
    return () => this.watchers.delete(fn);
  }

  private changed(): void {
    for (const w of this.watchers) w();
  }

  async list(q: ListQuery): Promise<MessageRow[]> {
    const shape = listingShape(q);
    let stmt = this.listStatements.get(shape);
    if (!stmt) {
      stmt = this.db.prepare(listingSql(q, (name) => `@${name}`));
      this.listStatements.set(shape, stmt);
    }
    return stmt.all(listingParams(q)) as MessageRow[];
  }

}
