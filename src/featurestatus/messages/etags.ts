// D47 entity tags of messages and listings. A message's ETag names its id and
// version (strong: the stored message changes exactly when its version does);
// a listing's is a digest of the page as sent (weak: another encoding of the
// same page would do). If-Match compares strongly (RFC 9110, 13.1.1).
import { createHash } from "node:crypto";
import type { ConnectError } from "@connectrpc/connect";
import { failure } from "../../kernel/errors.js";
import type { MessageRecord } from "./message-store.js";

export function messageEtag(row: MessageRecord): string {
  return `"${row.id}.${row.version}"`;
}

/**
 * A reader's answer by id (D61, D62, D63): its text depends on the language
 * and its dismissed mark on the reader as well as on the version, so all
 * three name it (weak: a reader's view, never an If-Match for a write).
 */
export function readerEtag(m: { id: number; version: number; language?: string; dismissed: boolean }): string {
  return `W/"${m.id}.${m.version}.${m.language ?? ""}.${m.dismissed ? 1 : 0}"`;
}

/** A short name of some bytes (128 bits of SHA-256). */
export function digest(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("base64url").slice(0, 22);
}

export function listingEtag(page: Uint8Array): string {
  return `W/"${digest(page)}"`;
}

/** The condition an If-Match value (or a request's etag field) sets; undefined when none was sent. */
export function ifMatch(value: string | null | undefined): ((row: MessageRecord) => boolean) | undefined {
  if (value === undefined || value === null) return undefined;
  const tags = value.split(",").map((t) => t.trim());
  if (tags.includes("*")) return () => true;
  return (row) => tags.includes(messageEtag(row)); // a weak tag (W/...) never matches, as strong comparison asks
}

/** 412 (gRPC FAILED_PRECONDITION): the message changed since the caller's ETag; its current one goes along. */
export function stale(current: MessageRecord): ConnectError {
  const etag = messageEtag(current);
  return failure("ETAG_MISMATCH", `message ${current.id} has changed: its ETag is now ${etag}; read it again and retry`, {
    headers: { etag },
  });
}
