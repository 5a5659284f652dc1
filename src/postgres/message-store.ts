// Messages in PostgreSQL, shared by every replica (D40): reads, and the
// transaction port of writes (message-transactions.ts), whose units run in
// one sql.begin, each statement awaited. The listing cache's change mark
// comes from the change feed (no query per read); this process's own writes
// move it at once, before their notification comes back. What a write
// records and tells is the domain's (message-writes.ts); here statements run
// and rows become records.
import type postgres from "postgres";
import type { Sql } from "./database.js";
import type { ChangeFeed } from "./changes.js";
import { messageIdsExhausted, type ListQuery, type MessageRecord, type MessageStore } from "../featurestatus/messages/message-store.js";
import type { MessageTransactions, MessageTx } from "../featurestatus/messages/message-transactions.js";
import { auditListingSql, listingParams, listingShape, listingSql, type ListParam } from "../featurestatus/listings/listing-sql.js";
import type { AuditEntryRecord, AuditQuery } from "../featurestatus/audit/audit.js";
import { awaited, runAwaiting, type Unit } from "../kernel/unit-of-work.js";
import { pgGroupCommit } from "./group-commit.js";
import { appendMessageEvent } from "./message-events.js";
import {
  AUDIT_COLUMNS,
  auditColumnsOf,
  auditEntryOf,
  columnsOf,
  messageOf,
  type AuditRow,
  type MessageRow,
} from "../featurestatus/messages/message-rows.js";

// Typed, so that PostgreSQL knows every parameter's type, used or not.
const PG_TYPES: Record<ListParam, string> = { now: "bigint", limit: "bigint", feature: "text", afterKey: "bigint", afterId: "integer" };

const TABLE = "messages";

export class PostgresMessageStore implements MessageStore, MessageTransactions {
  /** Per listing shape: the SQL text, and its parameters in $n order. */
  private readonly listings = new Map<string, { text: string; names: ListParam[] }>();

  constructor(
    private readonly sql: Sql,
    private readonly changes: ChangeFeed,
  ) {}

  changeMark(): string | undefined {
    return this.changes.mark(TABLE);
  }

  watch(fn: () => void): () => void {
    // "*": the listening connection was lost and is back; anything may have changed.
    return this.changes.watch((table) => (table === TABLE || table === "*") && fn());
  }

  async nextChangeAfter(now: number): Promise<number> {
    const [row] = await this.sql<{ next: number | null }[]>`
      SELECT least((SELECT min(start_date) FROM messages WHERE start_date > ${now}),
                   (SELECT min(expiring_date) FROM messages WHERE expiring_date > ${now})) AS next`;
    return row.next ?? Infinity;
  }

  async run<T>(unit: Unit<MessageTx, T>): Promise<T> {
    const went = { writing: false };
    try {
      // D66: a savepoint of a group's transaction (message writes share one lane: key 0).
      return await pgGroupCommit(this.sql).run("messages", (tx) => runAwaiting(unit(postgresMessageTx(tx, () => (went.writing = true)))));
    } finally {
      // A unit that went to change the messages (whether it did or not) moves the mark; the clock's events do not.
      if (went.writing) this.changes.changed(TABLE);
    }
  }

  async get(id: number): Promise<MessageRecord | undefined> {
    const row = (await this.sql<MessageRow[]>`SELECT * FROM messages WHERE id = ${id}`).at(0);
    return row && messageOf(row);
  }

  async listAudit(q: AuditQuery): Promise<AuditEntryRecord[]> {
    const names: (keyof AuditQuery)[] = [];
    const text = auditListingSql(
      q,
      (name) => (names.push(name), `$${names.length}::${name === "featureId" || name === "clientId" ? "text" : "bigint"}`),
    );
    const rows = (await this.sql.unsafe(
      text,
      names.map((n) => q[n] as string | number),
    )) as unknown as AuditRow[];
    return rows.map(auditEntryOf);
  }

  async purgeAuditBefore(cutoffMs: number): Promise<number> {
    return (await this.sql`DELETE FROM message_audit WHERE at < ${cutoffMs}`).count;
  }

  async list(q: ListQuery): Promise<MessageRecord[]> {
    const shape = listingShape(q);
    let listing = this.listings.get(shape);
    if (!listing) {
      const names: ListParam[] = [];
      const text = listingSql(q, (name) => {
        if (!names.includes(name)) names.push(name);
        return `$${names.indexOf(name) + 1}::${PG_TYPES[name]}`;
      });
      listing = { text, names };
      this.listings.set(shape, listing);
    }
    const values = listingParams(q);
    const rows = (await this.sql.unsafe(
      listing.text,
      // eslint-disable-next-line @typescript-eslint/no-non-null-assertion -- the names are those listingSql wrote for these values
      listing.names.map((n) => values[n]!),
      { prepare: true },
    )) as unknown as MessageRow[];
    return rows.map(messageOf);
  }
}

const PASSING = { startDate: "start_date", expiringDate: "expiring_date" } as const;

/** The statements of a message write, on the transaction `tx`; `writing` is told before each that may change the messages. */
function postgresMessageTx(tx: postgres.TransactionSql, writing: () => void): MessageTx {
  return {
    insertMessage: (data) =>
      awaited(async () => {
        writing();
        const d = columnsOf(data);
        try {
          const [row] = await tx<MessageRow[]>`
            INSERT INTO messages (feature_id, type, title, body, start_date, expiring_date, dismissible, audiences, paths, translations)
            VALUES (${d.feature_id}, ${d.type}, ${d.title}, ${d.body}, ${d.start_date}, ${d.expiring_date}, ${d.dismissible}, ${d.audiences}, ${d.paths}, ${d.translations}) RETURNING *`;
          return messageOf(row);
        } catch (e) {
          // The identity is an integer: past 2^31-1 the database refuses nextval (SQLSTATE 2200H).
          if ((e as { code?: string }).code === "2200H") throw messageIdsExhausted();
          throw e;
        }
      }),
    updateMessage: (id, version, data) =>
      awaited(async () => {
        writing();
        const a = columnsOf(data);
        const row = (
          await tx<MessageRow[]>`
          UPDATE messages SET type = ${a.type}, title = ${a.title}, body = ${a.body},
            start_date = ${a.start_date}, expiring_date = ${a.expiring_date}, dismissible = ${a.dismissible},
            audiences = ${a.audiences}, paths = ${a.paths}, translations = ${a.translations}, version = version + 1
          WHERE id = ${id} AND version = ${version} RETURNING *`
        ).at(0);
        return row && messageOf(row);
      }),
    deleteMessage: (id, version) =>
      awaited(async () => {
        writing();
        const at = version ?? null;
        const row = (
          await tx<MessageRow[]>`DELETE FROM messages WHERE id = ${id} AND (${at}::integer IS NULL OR version = ${at}::integer) RETURNING *`
        ).at(0);
        return row && messageOf(row);
      }),
    deleteExpiredBefore: (cutoff) =>
      awaited(async () => {
        writing();
        return (await tx<MessageRow[]>`DELETE FROM messages WHERE expiring_date < ${cutoff} RETURNING *`).map(messageOf);
      }),
    advanceEventClock: (nowS) =>
      awaited(async () => {
        const made = (
          await tx<{ mark: number }[]>`
          INSERT INTO message_event_marks (name, mark) VALUES ('time', ${nowS}) ON CONFLICT (name) DO NOTHING RETURNING mark`
        ).at(0);
        // The row lock makes replicas take turns: the second reads the mark the first moved.
        const [{ mark }] = await tx<{ mark: number }[]>`SELECT mark FROM message_event_marks WHERE name = 'time' FOR UPDATE`;
        if (made) return undefined; // the first run starts the clock
        if (mark < nowS) await tx`UPDATE message_event_marks SET mark = ${nowS} WHERE name = 'time'`;
        return mark;
      }),
    messagesPassing: (field, after, until) =>
      awaited(async () => {
        const column = tx(PASSING[field]);
        const rows = await tx<MessageRow[]>`
          SELECT * FROM messages WHERE ${column} > ${after} AND ${column} <= ${until} ORDER BY ${column}, id`;
        return rows.map(messageOf);
      }),
    appendAudit: (records) =>
      awaited(async () => {
        // In slices: a statement's parameters are bounded (65,535).
        for (let i = 0; i < records.length; i += 1000) {
          await tx`INSERT INTO message_audit ${tx(records.slice(i, i + 1000).map(auditColumnsOf), ...AUDIT_COLUMNS)}`;
        }
      }),
    appendEvent: (event) => awaited(() => appendMessageEvent(tx, event)),
  };
}
