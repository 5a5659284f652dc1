// Messages in PostgreSQL, shared by every replica (D40). The listing cache's
// change mark comes from the change feed (no query per read); this process's
// own writes move it at once, before their notification comes back.
import type { Sql } from "./database.js";
import type { ChangeFeed } from "./changes.js";
import {
  MAX_MESSAGE_ID,
  fromStored,
  messageIdsExhausted,
  toStored,
  type StoredRow,
  type ListQuery,
  type MessageData,
  type NewMessage,
  type MessageRow,
  type MessageStore,
} from "../featurestatus/message-store.js";
import { listingParams, listingShape, listingSql, type ListParam } from "../featurestatus/listing-sql.js";
import type { Actor, AuditQuery, AuditRow } from "../featurestatus/audit.js";
import { AUDIT_COLUMNS, auditListingSql, auditRecord } from "../featurestatus/audit-record.js";
import { recordMessageEvent } from "./message-events.js";

// Typed, so that PostgreSQL knows every parameter's type, used or not.
const PG_TYPES: Record<ListParam, string> = { now: "bigint", limit: "bigint", feature: "text", afterKey: "bigint", afterId: "integer" };

const TABLE = "messages";

export class PostgresMessageStore implements MessageStore {
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

  async insert(data: NewMessage, by?: Actor): Promise<MessageRow> {
    try {
      return await this.sql.begin(async (tx) => {
        const d = toStored(data);
        const [stored] = await tx<StoredRow[]>`
          INSERT INTO messages (feature_id, type, title, body, start_date, expiring_date, dismissible, audiences, paths, translations)
          VALUES (${d.feature_id}, ${d.type}, ${d.title}, ${d.body}, ${d.start_date}, ${d.expiring_date}, ${d.dismissible}, ${d.audiences}, ${d.paths}, ${d.translations}) RETURNING *`;
        const row = fromStored(stored);
        if (row.id > MAX_MESSAGE_ID) throw messageIdsExhausted();
        await tx`INSERT INTO message_audit ${tx(auditRecord("create", undefined, row, by), ...AUDIT_COLUMNS)}`;
        await recordMessageEvent(tx, "message.created", row);
        return row;
      });
    } catch (e) {
      // The identity is an integer: past 2^31-1 the database refuses nextval (SQLSTATE 2200H).
      if ((e as { code?: string }).code === "2200H") throw messageIdsExhausted();
      throw e;
    } finally {
      this.changes.changed(TABLE);
    }
  }

  async get(id: number): Promise<MessageRow | undefined> {
    const row = (await this.sql<StoredRow[]>`SELECT * FROM messages WHERE id = ${id}`).at(0);
    return row && fromStored(row);
  }

  async update(before: MessageRow, after: MessageData, by?: Actor): Promise<MessageRow | undefined> {
    try {
      return await this.sql.begin(async (tx) => {
        const a = toStored(after);
        const stored = (
          await tx<StoredRow[]>`
          UPDATE messages SET type = ${a.type}, title = ${a.title}, body = ${a.body},
            start_date = ${a.start_date}, expiring_date = ${a.expiring_date}, dismissible = ${a.dismissible},
            audiences = ${a.audiences}, paths = ${a.paths}, translations = ${a.translations}, version = version + 1
          WHERE id = ${before.id} AND version = ${before.version} RETURNING *`
        ).at(0);
        const out = stored && fromStored(stored);
        if (out) {
          await tx`INSERT INTO message_audit ${tx(auditRecord("update", before, out, by), ...AUDIT_COLUMNS)}`;
          await recordMessageEvent(tx, "message.updated", out);
        }
        return out;
      });
    } finally {
      this.changes.changed(TABLE);
    }
  }

  async delete(id: number, version?: number, by?: Actor): Promise<boolean> {
    try {
      const at = version ?? null;
      return await this.sql.begin(async (tx) => {
        const stored = (
          await tx<StoredRow[]>`DELETE FROM messages WHERE id = ${id} AND (${at}::integer IS NULL OR version = ${at}::integer) RETURNING *`
        ).at(0);
        const before = stored && fromStored(stored);
        if (before) {
          await tx`INSERT INTO message_audit ${tx(auditRecord("delete", before, undefined, by), ...AUDIT_COLUMNS)}`;
          await recordMessageEvent(tx, "message.deleted", before);
        }
        return before !== undefined;
      });
    } finally {
      this.changes.changed(TABLE);
    }
  }

  async purgeExpiredBefore(cutoff: number): Promise<number> {
    try {
      return await this.sql.begin(async (tx) => {
        const rows = (await tx<StoredRow[]>`DELETE FROM messages WHERE expiring_date < ${cutoff} RETURNING *`).map(fromStored);
        const at = Date.now();
        // In slices: a statement's parameters are bounded (65,535).
        for (let i = 0; i < rows.length; i += 1000) {
          const records = rows.slice(i, i + 1000).map((r) => auditRecord("cleanup", r, undefined, undefined, at));
          await tx`INSERT INTO message_audit ${tx(records, ...AUDIT_COLUMNS)}`;
        }
        return rows.length;
      });
    } finally {
      this.changes.changed(TABLE);
    }
  }

  async listAudit(q: AuditQuery): Promise<AuditRow[]> {
    const names: (keyof AuditQuery)[] = [];
    const text = auditListingSql(
      q,
      (name) => (names.push(name), `$${names.length}::${name === "featureId" || name === "clientId" ? "text" : "bigint"}`),
    );
    return (await this.sql.unsafe(
      text,
      names.map((n) => q[n] as string | number),
    )) as unknown as AuditRow[];
  }

  async purgeAuditBefore(cutoffMs: number): Promise<number> {
    return (await this.sql`DELETE FROM message_audit WHERE at < ${cutoffMs}`).count;
  }

  async list(q: ListQuery): Promise<MessageRow[]> {
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
    )) as unknown as StoredRow[];
    return rows.map(fromStored);
  }
}
