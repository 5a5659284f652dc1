// Messages in SQLite: reads, one statement each, and the transaction port of
// writes (message-transactions.ts), whose units run synchronously inside one
// better-sqlite3 transaction: a busy database fails a unit whole
// (transport/database-retry-interceptor.ts), and nothing else on the connection comes between its
// statements. What a write records and tells is the domain's
// (message-writes.ts); here statements run and rows become records.
import type { Statement } from "better-sqlite3";
import { param, type Db } from "./database.js";
import type { ListQuery, MessageRecord, MessageStore } from "../featurestatus/messages/message-store.js";
import type { MessageTransactions, MessageTx } from "../featurestatus/messages/message-transactions.js";
import { auditListingSql, listingParams, listingShape, listingSql } from "../featurestatus/listings/listing-sql.js";
import type { AuditEntryRecord, AuditQuery } from "../featurestatus/audit/audit.js";
import { immediate, runNow, type Unit } from "../kernel/unit-of-work.js";
import { groupCommit } from "./group-commit.js";
import { SqliteMessageEvents } from "./message-events.js";
import {
  AUDIT_COLUMNS,
  auditColumnsOf,
  auditEntryOf,
  columnsOf,
  messageOf,
  type AuditRow,
  type MessageColumns,
  type MessageRow,
} from "../featurestatus/messages/message-rows.js";
import { otherCommits } from "./data-version.js";

export class SqliteMessageStore implements MessageStore, MessageTransactions {
  private readonly listStatements = new Map<string, Statement>();
  /** Writes through this store; SQLite's data_version counts only other connections' commits. */
  private writes = 0;
  private readonly nextChangeStmt;
  private readonly getStmt;
  private readonly purgeAuditStmt;
  private readonly auditListings = new Map<string, Statement>();
  /** The statements of a unit of work: one set, since a unit runs whole before another starts. */
  private readonly tx: MessageTx;

  constructor(private readonly db: Db) {
    this.getStmt = db.prepare<[number], MessageRow>("SELECT * FROM messages WHERE id = ?");
    this.purgeAuditStmt = db.prepare<[number]>("DELETE FROM message_audit WHERE at < ?");
    this.nextChangeStmt = db
      .prepare<{ now: number }>(
        // The aggregate min skips a NULL side (no later start, or no later expiry); min(a, b) would be NULL.
        "SELECT min(t) FROM (SELECT min(start_date) AS t FROM messages WHERE start_date > @now UNION ALL SELECT min(expiring_date) FROM messages WHERE expiring_date > @now)",
      )
      .pluck();
    this.tx = sqliteMessageTx(db, () => this.writes++);
  }

  /** Changes whenever the messages may have changed: this process's writes at once, others' commits as otherCommits tells them. */
  changeMark(): string {
    return `${this.writes}:${otherCommits(this.db)}`;
  }

  /** The first second after `now` at which some message starts or expires (D19 windows move), or Infinity. */
  async nextChangeAfter(now: number): Promise<number> {
    return (this.nextChangeStmt.get({ now }) as number | null) ?? Infinity;
  }

  async run<T>(unit: Unit<MessageTx, T>): Promise<T> {
    // D66: a savepoint of the connection's group commit, sharing its transaction and fsync with the writes beside it.
    return groupCommit(this.db).run(() => runNow(unit(this.tx)));
  }

  async get(id: number): Promise<MessageRecord | undefined> {
    const row = this.getStmt.get(id);
    return row && messageOf(row);
  }

  async listAudit(q: AuditQuery): Promise<AuditEntryRecord[]> {
    const names: (keyof AuditQuery)[] = [];
    const text = auditListingSql(q, (name) => (names.push(name), param(name)));
    let stmt = this.auditListings.get(text);
    if (!stmt) this.auditListings.set(text, (stmt = this.db.prepare(text)));
    return (stmt.all(Object.fromEntries(names.map((n) => [n, q[n]]))) as AuditRow[]).map(auditEntryOf);
  }

  async purgeAuditBefore(cutoffMs: number): Promise<number> {
    return this.purgeAuditStmt.run(cutoffMs).changes;
  }

  /** One process serves a SQLite file: every write is this process's, told by the change bus. */
  watch(): () => void {
    return () => {};
  }

  async list(q: ListQuery): Promise<MessageRecord[]> {
    const shape = listingShape(q);
    let stmt = this.listStatements.get(shape);
    if (!stmt) {
      stmt = this.db.prepare(listingSql(q, param));
      this.listStatements.set(shape, stmt);
    }
    return (stmt.all(listingParams(q)) as MessageRow[]).map(messageOf);
  }
}

/** The statements of a message write, prepared once; `writing` is told before each statement that may change the messages. */
function sqliteMessageTx(db: Db, writing: () => void): MessageTx {
  const events = new SqliteMessageEvents(db);
  const insert = db.prepare<MessageColumns, MessageRow>(
    "INSERT INTO messages (feature_id, type, title, body, start_date, expiring_date, dismissible, audiences, paths, translations) VALUES (@feature_id, @type, @title, @body, @start_date, @expiring_date, @dismissible, @audiences, @paths, @translations) RETURNING *",
  );
  const update = db.prepare<MessageColumns & { id: number; version: number }, MessageRow>(
    "UPDATE messages SET type = @type, title = @title, body = @body, start_date = @start_date, expiring_date = @expiring_date, dismissible = @dismissible, audiences = @audiences, paths = @paths, translations = @translations, version = version + 1 WHERE id = @id AND version = @version RETURNING *",
  );
  const remove = db.prepare<{ id: number; version: number | null }, MessageRow>(
    "DELETE FROM messages WHERE id = @id AND (@version IS NULL OR version = @version) RETURNING *",
  );
  const purge = db.prepare<[number], MessageRow>("DELETE FROM messages WHERE expiring_date < ? RETURNING *");
  const clockMark = db.prepare<[], number>("SELECT mark FROM message_event_marks WHERE name = 'time'").pluck();
  const moveClock = db.prepare<{ nowS: number }>(
    "INSERT INTO message_event_marks (name, mark) VALUES ('time', @nowS) ON CONFLICT (name) DO UPDATE SET mark = max(mark, @nowS)",
  );
  const passing = {
    startDate: db.prepare<{ after: number; until: number }, MessageRow>(
      "SELECT * FROM messages WHERE start_date > @after AND start_date <= @until ORDER BY start_date, id",
    ),
    expiringDate: db.prepare<{ after: number; until: number }, MessageRow>(
      "SELECT * FROM messages WHERE expiring_date > @after AND expiring_date <= @until ORDER BY expiring_date, id",
    ),
  };
  const audit = db.prepare(
    `INSERT INTO message_audit (${AUDIT_COLUMNS.join(", ")}) VALUES (${AUDIT_COLUMNS.map((c) => "@" + c).join(", ")})`,
  );
  return {
    insertMessage: (data) =>
      immediate(() => {
        writing();
        // eslint-disable-next-line @typescript-eslint/no-non-null-assertion -- INSERT ... RETURNING answers the row it wrote
        return messageOf(insert.get(columnsOf(data))!);
      }),
    updateMessage: (id, version, data) =>
      immediate(() => {
        writing();
        const row = update.get({ ...columnsOf(data), id, version });
        return row && messageOf(row);
      }),
    deleteMessage: (id, version) =>
      immediate(() => {
        writing();
        const row = remove.get({ id, version: version ?? null });
        return row && messageOf(row);
      }),
    deleteExpiredBefore: (cutoff) =>
      immediate(() => {
        writing();
        return purge.all(cutoff).map(messageOf);
      }),
    advanceEventClock: (nowS) =>
      immediate(() => {
        const mark = clockMark.get();
        moveClock.run({ nowS });
        return mark;
      }),
    messagesPassing: (field, after, until) => immediate(() => passing[field].all({ after, until }).map(messageOf)),
    appendAudit: (records) => immediate(() => void records.forEach((r) => audit.run(auditColumnsOf(r)))),
    appendEvent: (event) => immediate(() => events.append(event)),
  };
}
