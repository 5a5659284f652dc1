// D48 the audit trail of messages: every create, update and delete, and every
// deletion by the retention cleanup, with when, who and the message before and
// after. Written by the message stores in the same transaction as the change
// itself, so a change is never without its record (nor a record without it).
import type { MessageRow } from "./message-store.js";

export type AuditAction = "create" | "update" | "delete" | "cleanup";

/** Who made a change: the caller's client id and credential; absent for the retention cleanup. */
export interface Actor {
  clientId: string;
  keyId?: string;
  issuer?: string;
  subject?: string;
}

export interface AuditRow {
  id: number;
  /** Epoch milliseconds. */
  at: number;
  action: AuditAction;
  message_id: number;
  feature_id: string | null;
  client_id: string | null;
  key_id: string | null;
  issuer: string | null;
  subject: string | null;
  /** The stored message as JSON, before and after (null: it did not exist). */
  before: string | null;
  after: string | null;
}

export interface AuditQuery {
  messageId?: number;
  featureId?: string;
  clientId?: string;
  /** Epoch milliseconds, inclusive. */
  from?: number;
  to?: number;
  /** Keyset position: entries with a smaller id (newest first). */
  beforeId?: number;
  limit: number;
}

/** The row to record for a change of `before` into `after` (one of them present). */
export function auditRecord(
  action: AuditAction,
  before: MessageRow | undefined,
  after: MessageRow | undefined,
  by: Actor | undefined,
  at = Date.now(),
): Omit<AuditRow, "id"> {
  const row = (after ?? before)!;
  return {
    at,
    action,
    message_id: row.id,
    feature_id: row.feature_id,
    client_id: by?.clientId ?? null,
    key_id: by?.keyId ?? null,
    issuer: by?.issuer ?? null,
    subject: by?.subject ?? null,
    before: before ? JSON.stringify(before) : null,
    after: after ? JSON.stringify(after) : null,
  };
}

/** The filters of an audit listing as SQL, written once for both backends; `param` spells a placeholder. */
export function auditListingSql(q: AuditQuery, param: (name: keyof AuditQuery) => string): string {
  const where = ["1 = 1"];
  if (q.messageId !== undefined) where.push(`message_id = ${param("messageId")}`);
  if (q.featureId !== undefined) where.push(`feature_id = ${param("featureId")}`);
  if (q.clientId !== undefined) where.push(`client_id = ${param("clientId")}`);
  if (q.from !== undefined) where.push(`at >= ${param("from")}`);
  if (q.to !== undefined) where.push(`at <= ${param("to")}`);
  if (q.beforeId !== undefined) where.push(`id < ${param("beforeId")}`);
  return `SELECT * FROM message_audit WHERE ${where.join(" AND ")} ORDER BY id DESC LIMIT ${param("limit")}`;
}

/** The columns of a record, in one order for inserts. */
export const AUDIT_COLUMNS = [
  "at",
  "action",
  "message_id",
  "feature_id",
  "client_id",
  "key_id",
  "issuer",
  "subject",
  "before",
  "after",
] as const;
