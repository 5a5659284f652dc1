// What the feature status service needs of a message store (D19, D21, D22),
// whichever database holds the messages. Listings are keyset-paged on
// (sort key, id), so rows inserted or deleted between pages neither repeat
// nor vanish (D21).
import type { Actor, AuditQuery, AuditRow } from "./audit.js";
import type { ChangeSource } from "./listing-cache.js";
import type { ConnectError } from "@connectrpc/connect";
import { failure } from "../core/errors.js";

/** D62: a message's title and body in one language. */
export interface Translation {
  title: string;
  body: string;
}

export interface MessageRow {
  id: number;
  feature_id: string | null;
  type: string;
  title: string;
  body: string;
  start_date: number;
  expiring_date: number;
  /** D63: 0 for a message the reader may not dismiss. */
  dismissible: number;
  /** 1 when created, one more at each update (D47: the ETag). */
  version: number;
  /** D61: whom and which pages it is for; empty: everyone, every page. */
  audiences: string[];
  paths: string[];
  /** D62: by canonical BCP 47 tag. */
  translations: Record<string, Translation>;
}

export type MessageData = Omit<MessageRow, "id" | "version">;
type Targeted = "audiences" | "paths" | "translations";
/** What an insert takes: without targeting and translations, a message for everyone in one language. */
export type NewMessage = Omit<MessageData, Targeted> & Partial<Pick<MessageData, Targeted>>;

/** A row as both databases hold it: targeting and translations as JSON text. */
export type StoredRow = Omit<MessageRow, "audiences" | "paths" | "translations"> & {
  audiences: string;
  paths: string;
  translations: string;
};
export type StoredData = Omit<StoredRow, "id" | "version">;

/** A row read from a database, as the service sees it. */
export function fromStored(r: StoredRow): MessageRow {
  // The JSON that toStored wrote from these same fields.
  return {
    ...r,
    audiences: JSON.parse(r.audiences) as MessageRow["audiences"],
    paths: JSON.parse(r.paths) as MessageRow["paths"],
    translations: JSON.parse(r.translations) as MessageRow["translations"],
  };
}

/** A message's fields as a database stores them. */
export function toStored(d: NewMessage): StoredData {
  return {
    ...d,
    audiences: JSON.stringify(d.audiences ?? []),
    paths: JSON.stringify(d.paths ?? []),
    translations: JSON.stringify(d.translations ?? {}),
  };
}

/** D19: the listing windows and orders, as callers spell them (they may use any case). */
export const EXPIRIES = ["All", "NonExpired", "Expired", "Pending"] as const;
export const SORT_BYS = ["StartDate", "ExpiringDate"] as const;
export const SORT_ORDERS = ["Asc", "Desc"] as const;
export type Expiry = (typeof EXPIRIES)[number];
export type SortBy = (typeof SORT_BYS)[number];
export type SortOrder = (typeof SORT_ORDERS)[number];

export interface ListQuery {
  /** A feature's listing (its messages and every global one), or null for global messages only. */
  featureId: string | null;
  expiry: Expiry;
  sortBy: SortBy;
  sortOrder: SortOrder;
  /** Keyset position: rows strictly after it in the listing's order. */
  after?: { key: number; id: number };
  limit: number;
  now: number;
}

export const MAX_MESSAGE_ID = 2 ** 31 - 1; // the API's id is an int32

/** What an insert past MAX_MESSAGE_ID raises, on either backend (D59: a stable reason, not a 500). */
export function messageIdsExhausted(): ConnectError {
  return failure("MESSAGE_IDS_EXHAUSTED", `every message id up to ${MAX_MESSAGE_ID} has been used`);
}

export interface MessageStore extends ChangeSource {
  // Every write is recorded in the audit trail with it (D48), `by` whom (absent: unknown).
  /** Inserts and returns the row; refuses (and stores nothing) once ids pass the API's int32. */
  insert(data: NewMessage, by?: Actor): Promise<MessageRow>;
  get(id: number): Promise<MessageRow | undefined>;
  /**
   * Writes `after`'s fields over `before` if the stored message is still at `before.version` (and
   * counts one more); undefined when it is not, or the row is gone. Every write moves the version,
   * so when it writes, `before` is what it replaced: the audit's before-image, not read again.
   */
  update(before: MessageRow, after: MessageData, by?: Actor): Promise<MessageRow | undefined>;
  /** Deletes the row (only at `version`, when given); false when there was no such row. */
  delete(id: number, version?: number, by?: Actor): Promise<boolean>;
  /** Deletes messages that expired before the cutoff (epoch seconds), recorded as the cleanup's; returns how many. */
  purgeExpiredBefore(cutoff: number): Promise<number>;
  /** Audit entries, newest first. */
  listAudit(q: AuditQuery): Promise<AuditRow[]>;
  /** Deletes audit entries older than the cutoff (epoch milliseconds); returns how many. */
  purgeAuditBefore(cutoffMs: number): Promise<number>;
  list(q: ListQuery): Promise<MessageRow[]>;
  /**
   * Calls fn after each write that may have changed the messages: this
   * process's, and on PostgreSQL every replica's (D46). Returns the unsubscribe.
   */
  watch(fn: () => void): () => void;
}

export function sortKeyOf(row: MessageRow, sortBy: SortBy): number {
  return sortBy === "StartDate" ? row.start_date : row.expiring_date;
}
