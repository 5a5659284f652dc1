// D48 the audit trail of messages: every create, update and delete, and every
// deletion by the retention cleanup, with when, who and the message before and
// after. Written by the message stores in the same transaction as the change
// itself, so a change is never without its record (nor a record without it).

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
