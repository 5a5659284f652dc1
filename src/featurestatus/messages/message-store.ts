// What the feature status service reads of a message store (D19, D21, D22),
// whichever database holds the messages, and the messages as the domain
// holds them. Listings are keyset-paged on (sort key, id), so rows inserted
// or deleted between pages neither repeat nor vanish (D21). Writes are not
// here: they are units of work over message-transactions.ts, whose effects
// message-writes.ts decides.
import type { AuditEntryRecord, AuditQuery } from "../audit/audit.js";
import type { ChangeSource } from "../listings/listing-cache.js";
import type { ConnectError } from "@connectrpc/connect";
import { failure } from "../../kernel/errors.js";

/** D62: a message's title and body in one language. */
export interface Translation {
  title: string;
  body: string;
}

/** A stored message, as the domain reads it (the stores map their rows to it). */
export interface MessageRecord {
  id: number;
  /** Null: a global message. */
  featureId: string | null;
  type: string;
  title: string;
  body: string;
  /** Epoch seconds, UTC. */
  startDate: number;
  expiringDate: number;
  /** D63: false for a message the reader may not dismiss. */
  dismissible: boolean;
  /** 1 when created, one more at each update (D47: the ETag). */
  version: number;
  /** D61: whom and which pages it is for; empty: everyone, every page. */
  audiences: string[];
  paths: string[];
  /** D62: by canonical BCP 47 tag. */
  translations: Record<string, Translation>;
}

export type MessageData = Omit<MessageRecord, "id" | "version">;
type Targeted = "audiences" | "paths" | "translations";
/** What an insert takes: without targeting and translations, a message for everyone in one language. */
export type NewMessage = Omit<MessageData, Targeted> & Partial<Pick<MessageData, Targeted>>;

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
  get(id: number): Promise<MessageRecord | undefined>;
  list(q: ListQuery): Promise<MessageRecord[]>;
  /** Audit entries, newest first. */
  listAudit(q: AuditQuery): Promise<AuditEntryRecord[]>;
  /** Deletes audit entries older than the cutoff (epoch milliseconds); returns how many. */
  purgeAuditBefore(cutoffMs: number): Promise<number>;
  /**
   * Calls fn when another process may have changed the messages (on PostgreSQL every replica's
   * writes, D46; it may hear this process's own too). Returns the unsubscribe. This process's
   * writes are told by the change bus (change-bus.ts), after they commit.
   */
  watch(fn: () => void): () => void;
}

export function sortKeyOf(row: MessageRecord, sortBy: SortBy): number {
  return sortBy === "StartDate" ? row.startDate : row.expiringDate;
}
