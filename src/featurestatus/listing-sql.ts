// The SQL of a message listing (D19 windows, D21 keyset order), one text for
// both backends: only how a parameter is written differs (SQLite @now,
// PostgreSQL $1::bigint), so the rule itself is written once.
import type { ListQuery } from "./message-store.js";

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
