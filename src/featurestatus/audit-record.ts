// How a message store writes the audit trail (D48, audit.ts): the record of a
// change and the listing's SQL, once for both dialects. Apart from audit.ts,
// whose types the store interface (message-store.ts) uses, so that the two do
// not import each other.
import type { Actor, AuditAction, AuditQuery, AuditRow } from "./audit.js";
import type { MessageRow } from "./message-store.js";

/** The row to record for a change of `before` into `after` (one of them present). */
export function auditRecord(
  action: AuditAction,
  before: MessageRow | undefined,
  after: MessageRow | undefined,
  by: Actor | undefined,
  at = Date.now(),
): Omit<AuditRow, "id"> {
  const row = after ?? before;
  if (!row) throw new TypeError("an audit record needs the message before or after the change");
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
