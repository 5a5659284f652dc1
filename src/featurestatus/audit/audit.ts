// D48 the audit trail of messages: every create, update and delete, and every
// deletion by the retention cleanup, with when, who and the message before and
// after. Decided once, by the unit of work of each write (message-writes.ts),
// and written in the same transaction as the change itself, so a change is
// never without its record (nor a record without it).

export type AuditAction = "create" | "update" | "delete" | "cleanup";

/** Who made a change: the caller's client id and credential; absent for the retention cleanup. */
export interface Actor {
  clientId: string;
  keyId?: string;
  issuer?: string;
  subject?: string;
}

/** A record as a write appends it. */
export interface AuditRecord {
  /** Epoch milliseconds. */
  at: number;
  action: AuditAction;
  messageId: number;
  featureId: string | null;
  clientId: string | null;
  keyId: string | null;
  issuer: string | null;
  subject: string | null;
  /** The stored message before and after, as message images (message-image.ts; null: it did not exist). */
  before: string | null;
  after: string | null;
}

/** A record as the trail is read: numbered, newest highest. */
export interface AuditEntryRecord extends AuditRecord {
  id: number;
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
