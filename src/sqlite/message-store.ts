// Messages in SQLite. Each call is one statement or one transaction, run
// synchronously: a busy database fails it whole (busy-retry.ts).
import type { Statement } from "better-sqlite3";
import { param, type Db } from "./database.js";
import {
  MAX_MESSAGE_ID,
  fromStored,
  messageIdsExhausted,
  toStored,
  type StoredData,
  type StoredRow,
  type ListQuery,
  type MessageData,
  type NewMessage,
  type MessageRow,
  type MessageStore,
} from "../featurestatus/message-store.js";
import { listingParams, listingShape, listingSql } from "../featurestatus/listing-sql.js";
import type { Actor, AuditQuery, AuditRow } from "../featurestatus/audit.js";
import { AUDIT_COLUMNS, auditListingSql, auditRecord } from "../featurestatus/audit-record.js";
import { SqliteMessageEvents } from "./message-events.js";
import { otherCommits } from "./data-version.js";

export class SqliteMessageStore implements MessageStore {
  private readonly listStatements = new Map<string, Statement>();
  /** Writes through this store; SQLite's data_version counts only other connections' commits. */
  private writes = 0;
  private readonly watchers = new Set<() => void>();
  private readonly nextChangeStmt;
  private readonly insertStmt;
  private readonly getStmt;
  private readonly updateStmt;
  private readonly deleteStmt;
  private readonly purgeStmt;
  private readonly auditStmt;
  private readonly purgeAuditStmt;
  private readonly auditListings = new Map<string, Statement>();
  /** D63: each change's event, in its transaction. */
  private readonly events: SqliteMessageEvents;

  constructor(private readonly db: Db) {
    this.events = new SqliteMessageEvents(db);
    this.insertStmt = db.prepare<StoredData, StoredRow>(
      "INSERT INTO messages (feature_id, type, title, body, start_date, expiring_date, dismissible, audiences, paths, translations) VALUES (@feature_id, @type, @title, @body, @start_date, @expiring_date, @dismissible, @audiences, @paths, @translations) RETURNING *",
    );
    this.getStmt = db.prepare<[number], StoredRow>("SELECT * FROM messages WHERE id = ?");
    this.updateStmt = db.prepare<StoredRow, StoredRow>(
      "UPDATE messages SET type = @type, title = @title, body = @body, start_date = @start_date, expiring_date = @expiring_date, dismissible = @dismissible, audiences = @audiences, paths = @paths, translations = @translations, version = version + 1 WHERE id = @id AND version = @version RETURNING *",
    );
    this.deleteStmt = db.prepare<{ id: number; version: number | null }, StoredRow>(
      "DELETE FROM messages WHERE id = @id AND (@version IS NULL OR version = @version) RETURNING *",
    );
    this.purgeStmt = db.prepare<[number], StoredRow>("DELETE FROM messages WHERE expiring_date < ? RETURNING *");
    this.auditStmt = db.prepare(
      `INSERT INTO message_audit (${AUDIT_COLUMNS.join(", ")}) VALUES (${AUDIT_COLUMNS.map((c) => "@" + c).join(", ")})`,
    );
    this.purgeAuditStmt = db.prepare<[number]>("DELETE FROM message_audit WHERE at < ?");
    this.nextChangeStmt = db
      .prepare<{ now: number }>(
        // The aggregate min skips a NULL side (no later start, or no later expiry); min(a, b) would be NULL.
        "SELECT min(t) FROM (SELECT min(start_date) AS t FROM messages WHERE start_date > @now UNION ALL SELECT min(expiring_date) FROM messages WHERE expiring_date > @now)",
      )
      .pluck();
  }

  /** Changes whenever the messages may have changed: this process's writes at once, others' commits as otherCommits tells them. */
  changeMark(): string {
    return `${this.writes}:${otherCommits(this.db)}`;
  }

  /** The first second after `now` at which some message starts or expires (D19 windows move), or Infinity. */
  async nextChangeAfter(now: number): Promise<number> {
    return (this.nextChangeStmt.get({ now }) as number | null) ?? Infinity;
  }

  async insert(data: NewMessage, by?: Actor): Promise<MessageRow> {
    this.writes++;
    const row = this.db.transaction(() => {
      // eslint-disable-next-line @typescript-eslint/no-non-null-assertion -- INSERT ... RETURNING answers the row it wrote
      const row = fromStored(this.insertStmt.get(toStored(data))!);
      if (row.id > MAX_MESSAGE_ID) throw messageIdsExhausted();
      this.auditStmt.run(auditRecord("create", undefined, row, by));
      this.events.record("message.created", row);
      return row;
    })();
    this.changed();
    return row;
  }

  async get(id: number): Promise<MessageRow | undefined> {
    const row = this.getStmt.get(id);
    return row && fromStored(row);
  }

  async update(before: MessageRow, after: MessageData, by?: Actor): Promise<MessageRow | undefined> {
    this.writes++;
    const out = this.db.transaction(() => {
      const stored = this.updateStmt.get({ ...toStored(after), id: before.id, version: before.version });
      const written = stored && fromStored(stored);
      if (written) {
        this.auditStmt.run(auditRecord("update", before, written, by));
        this.events.record("message.updated", written);
      }
      return written;
    })();
    if (out) this.changed();
    return out;
  }

  async delete(id: number, version?: number, by?: Actor): Promise<boolean> {
    this.writes++;
    const before = this.db.transaction(() => {
      const stored = this.deleteStmt.get({ id, version: version ?? null });
      const before = stored && fromStored(stored);
      if (before) {
        this.auditStmt.run(auditRecord("delete", before, undefined, by));
        this.events.record("message.deleted", before);
      }
      return before;
    })();
    if (before) this.changed();
    return before !== undefined;
  }

  async purgeExpiredBefore(cutoff: number): Promise<number> {
    this.writes++;
    const gone = this.db.transaction(() => {
      const rows = this.purgeStmt.all(cutoff).map(fromStored);
      const at = Date.now();
      for (const r of rows) this.auditStmt.run(auditRecord("cleanup", r, undefined, undefined, at));
      return rows.length;
    })();
    if (gone > 0) this.changed();
    return gone;
  }

  async listAudit(q: AuditQuery): Promise<AuditRow[]> {
    const names: (keyof AuditQuery)[] = [];
    const text = auditListingSql(q, (name) => (names.push(name), param(name)));
    let stmt = this.auditListings.get(text);
    if (!stmt) this.auditListings.set(text, (stmt = this.db.prepare(text)));
    return stmt.all(Object.fromEntries(names.map((n) => [n, q[n]]))) as AuditRow[];
  }

  async purgeAuditBefore(cutoffMs: number): Promise<number> {
    return this.purgeAuditStmt.run(cutoffMs).changes;
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
      stmt = this.db.prepare(listingSql(q, param));
      this.listStatements.set(shape, stmt);
    }
    return (stmt.all(listingParams(q)) as StoredRow[]).map(fromStored);
  }
}
