// The SQL of a message listing (D19 windows, D21 keyset order) and of the
// audit trail's (D48), one text for both backends: only how a parameter is
// written differs (SQLite @now, PostgreSQL $1::bigint), so the rule itself is
// written once.
import type { AuditQuery } from "../audit/audit.js";
import type { ListQuery } from "../messages/message-store.js";

export type ListParam = "now" | "limit" | "feature" | "afterKey" | "afterId";

const SORT_COLUMN = { StartDate: "start_date", ExpiringDate: "expiring_date" } as const;

/** The statement's shape: queries of one shape share one prepared statement. */
export function listingShape(q: ListQuery): string {
  return `${q.featureId === null}|${q.expiry}|${q.sortBy}|${q.sortOrder}|${q.after !== undefined}`;
}

/** The listing's SELECT, each parameter written by `param` (called once per use). */
export function listingSql(q: ListQuery, param: (name: ListParam) => string): string {
  const col = SORT_COLUMN[q.sortBy];
  const dir = q.sortOrder === "Asc" ? "ASC" : "DESC";
  const cmp = q.sortOrder === "Asc" ? ">" : "<";
  const window = {
    All: `${param("now")} IS NOT NULL`, // names now all the same, so that every shape binds the same parameters
    NonExpired: `start_date <= ${param("now")} AND ${param("now")} < expiring_date`,
    Expired: `expiring_date <= ${param("now")}`,
    Pending: `${param("now")} < start_date`,
  }[q.expiry];
  const scope = q.featureId === null ? "feature_id IS NULL" : `(feature_id = ${param("feature")} OR feature_id IS NULL)`;
  const keyset = q.after ? `AND (${col}, id) ${cmp} (${param("afterKey")}, ${param("afterId")})` : "";
  return `SELECT * FROM messages WHERE ${scope} AND ${window} ${keyset} ORDER BY ${col} ${dir}, id ${dir} LIMIT ${param("limit")}`;
}

/** The listing's parameter values by name. */
export function listingParams(q: ListQuery): Partial<Record<ListParam, string | number>> {
  const out: Partial<Record<ListParam, string | number>> = { now: q.now, limit: q.limit };
  if (q.featureId !== null) out.feature = q.featureId;
  if (q.after) {
    out.afterKey = q.after.key;
    out.afterId = q.after.id;
  }
  return out;
}

/** D48: the filters of an audit listing as SQL, newest first; `param` spells a placeholder. */
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
