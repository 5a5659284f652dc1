// What a listing is asked for: the D19 window and order of a message listing,
// the D21 page size, and the audit trail's time bounds. Values are read as
// callers spell them; each one at fault is a 400 naming it.
import { ViolationList } from "../../kernel/errors.js";
import { parseZonedDate } from "../messages/message-fields.js";
import { EXPIRIES, SORT_BYS, SORT_ORDERS, type Expiry, type SortBy, type SortOrder } from "../messages/message-store.js";

export const DEFAULT_LIMIT = 100; // D21
export const MAX_LIMIT = 1000;

/** A message listing's parameters as sent. */
export interface ListParams {
  expiry?: string;
  sortBy?: string;
  sortOrder?: string;
  cursor?: string;
  limit?: number;
}

/** A message listing's parameters as read. */
export interface Listing {
  expiry: Expiry;
  sortBy: SortBy;
  sortOrder: SortOrder;
  limit: number;
}

export function listingOf(p: ListParams): Listing {
  const v = new ViolationList();
  const expiry = oneOf<Expiry>(p.expiry, EXPIRIES, "NonExpired", "expiry", v);
  const sortBy = oneOf<SortBy>(p.sortBy, SORT_BYS, "StartDate", "sortBy", v);
  const sortOrder = oneOf<SortOrder>(p.sortOrder, SORT_ORDERS, "Desc", "sortOrder", v);
  const limit = limitOf(p.limit, v);
  v.throwIfAny();
  return { expiry, sortBy, sortOrder, limit };
}

/** The audit trail's parameters as read: its bounds in epoch seconds, and its page size. */
export function auditParamsOf(p: { from?: string; to?: string; limit?: number }): { from?: number; to?: number; limit: number } {
  const v = new ViolationList();
  const from = p.from === undefined ? undefined : parseZonedDate(p.from, "from", v);
  const to = p.to === undefined ? undefined : parseZonedDate(p.to, "to", v);
  const limit = limitOf(p.limit, v);
  v.throwIfAny();
  return { from, to, limit };
}

/** D19: filter and sort values are case-insensitive; unknown values are a 400. */
function oneOf<T extends string>(value: string | undefined, allowed: readonly T[], fallback: T, field: string, v: ViolationList): T {
  if (value === undefined || value === "") return fallback;
  const hit = allowed.find((a) => a.toLowerCase() === value.toLowerCase());
  if (!hit) v.add(field, `must be one of ${allowed.join(", ")}`);
  return hit ?? fallback;
}

/** D21: a page's size, 1..1000 (default 100); above 1000 it is clamped, below 1 refused. */
function limitOf(asked: number | undefined, v: ViolationList): number {
  const limit = asked ?? DEFAULT_LIMIT;
  if (limit < 1) v.add("limit", "must be an integer of at least 1");
  return Math.min(limit, MAX_LIMIT);
}
