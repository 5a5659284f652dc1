// The messages' rows as both SQL dialects store them (the same columns and
// encodings in SQLite and PostgreSQL), as the domain's records, and back: targeting
// and translations as JSON text, the dismissible mark as 0 or 1, and the
// audit trail's columns (D48).
import type { AuditEntryRecord, AuditRecord } from "../audit/audit.js";
import type { MessageRecord, NewMessage } from "./message-store.js";

/** A row of messages as SELECT * and RETURNING * answer it. */
export interface MessageRow {
  id: number;
  feature_id: string | null;
  type: string;
  title: string;
  body: string;
  start_date: number;
  expiring_date: number;
  version: number;
  audiences: string;
  paths: string;
  translations: string;
  dismissible: number;
}

/** The columns an insert or update writes. */
export type MessageColumns = Omit<MessageRow, "id" | "version">;

export function messageOf(r: MessageRow): MessageRecord {
  return {
    id: r.id,
    featureId: r.feature_id,
    type: r.type,
    title: r.title,
    body: r.body,
    startDate: r.start_date,
    expiringDate: r.expiring_date,
    dismissible: r.dismissible !== 0,
    version: r.version,
    // The JSON that columnsOf wrote from these same fields.
    audiences: JSON.parse(r.audiences) as string[],
    paths: JSON.parse(r.paths) as string[],
    translations: JSON.parse(r.translations) as MessageRecord["translations"],
  };
}

export function columnsOf(m: NewMessage): MessageColumns {
  return {
    feature_id: m.featureId,
    type: m.type,
    title: m.title,
    body: m.body,
    start_date: m.startDate,
    expiring_date: m.expiringDate,
    dismissible: m.dismissible ? 1 : 0,
    audiences: JSON.stringify(m.audiences ?? []),
    paths: JSON.stringify(m.paths ?? []),
    translations: JSON.stringify(m.translations ?? {}),
  };
}

/** A row of message_audit. */
export interface AuditRow {
  id: number;
  at: number;
  action: string;
  message_id: number;
  feature_id: string | null;
  client_id: string | null;
  key_id: string | null;
  issuer: string | null;
  subject: string | null;
  before: string | null;
  after: string | null;
}

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

export function auditColumnsOf(r: AuditRecord): Omit<AuditRow, "id"> {
  return {
    at: r.at,
    action: r.action,
    message_id: r.messageId,
    feature_id: r.featureId,
    client_id: r.clientId,
    key_id: r.keyId,
    issuer: r.issuer,
    subject: r.subject,
    before: r.before,
    after: r.after,
  };
}

export function auditEntryOf(r: AuditRow): AuditEntryRecord {
  return {
    id: r.id,
    at: r.at,
    action: r.action as AuditEntryRecord["action"],
    messageId: r.message_id,
    featureId: r.feature_id,
    clientId: r.client_id,
    keyId: r.key_id,
    issuer: r.issuer,
    subject: r.subject,
    before: r.before,
    after: r.after,
  };
}
