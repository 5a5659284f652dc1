// Listing cursors (D21): where the next page of a message listing, or of the
// audit trail, begins, sealed with the server's key and bound to the listing
// it came from (its scope, window and order; the audit trail's filters), so
// that a cursor of another listing, or one tampered with, is a 400.
import type { CursorSeal } from "../../kernel/cursor-seal.js";
import { invalidField } from "../../kernel/errors.js";
import type { Scope } from "../messages/access.js";
import { sortKeyOf, type MessageRecord } from "../messages/message-store.js";
import type { Listing } from "./listing-params.js";

/** A keyset position: rows strictly after this sort key and id. */
export interface Position {
  key: number;
  id: number;
}

/** The listing a message cursor is bound to (the page size is not part of it). */
export function listingBinding(scope: Scope, l: Listing): string {
  return JSON.stringify(["messages", scope, l.expiry, l.sortBy, l.sortOrder]);
}

/** The cursor to the page after `last`, the last row of this one. */
export function issueListingCursor(seal: CursorSeal, binding: string, l: Listing, last: MessageRecord): string {
  return seal.seal(binding, [sortKeyOf(last, l.sortBy), last.id]);
}

/** Where a listing resumes; undefined for the first page (no cursor, or an empty one). */
export function openListingCursor(seal: CursorSeal, binding: string, cursor: string | undefined): Position | undefined {
  if (cursor === undefined || cursor === "") return undefined;
  const opened = seal.open(binding, cursor);
  if (!isPosition(opened)) throw refused();
  return { key: opened[0], id: opened[1] };
}

/** The filters an audit cursor is bound to. */
export function auditBinding(q: { messageId?: number; featureId?: string; clientId?: string; from?: string; to?: string }): string {
  return JSON.stringify(["audit", q.messageId ?? null, q.featureId ?? null, q.clientId ?? null, q.from ?? null, q.to ?? null]);
}

/** The cursor to the audit entries older than `lastId`. */
export function issueAuditCursor(seal: CursorSeal, binding: string, lastId: number): string {
  return seal.seal(binding, [lastId]);
}

/** The id the audit trail resumes below; undefined for the first page. */
export function openAuditCursor(seal: CursorSeal, binding: string, cursor: string | undefined): number | undefined {
  if (cursor === undefined || cursor === "") return undefined;
  const opened = seal.open(binding, cursor);
  if (!Array.isArray(opened) || opened.length !== 1 || !Number.isSafeInteger(opened[0])) throw refused();
  return opened[0] as number;
}

function refused() {
  return invalidField("cursor", "malformed, or issued for another listing", "CURSOR_INVALID");
}

function isPosition(x: unknown): x is [number, number] {
  return Array.isArray(x) && x.length === 2 && Number.isInteger(x[0]) && Number.isInteger(x[1]);
}
