// Stored rows as the API's messages: dates as written (D15), an unset
// feature as no field (REST writes it as null).
import { create } from "@bufbuild/protobuf";
import { AuditEntrySchema, MessageSchema, type AuditEntry, type Message } from "../gen/meridian/featurestatus/v1/feature_status_pb.js";
import type { AuditRow } from "./audit.js";
import { formatDate } from "./message-fields.js";
import type { MessageRow } from "./message-store.js";
import { chooseLanguage } from "./languages.js";
import { EDITING, type View } from "./reader-view.js";

/** A message as `view` reads it (D62: in the language it prefers), with its targeting and translations for BackOffice (D61). */
export function toMessage(row: MessageRow, view: View): Message {
  // Audit images written before D61/D62 lack the fields.
  const translations = (row.translations as MessageRow["translations"] | undefined) ?? {};
  const language = chooseLanguage(Object.keys(translations), view.wish);
  const text = language === undefined ? row : translations[language];
  return create(MessageSchema, {
    id: row.id,
    featureId: row.feature_id ?? undefined,
    type: row.type,
    title: text.title,
    body: text.body,
    startDate: formatDate(row.start_date),
    expiringDate: formatDate(row.expiring_date),
    audiences: view.full ? ((row.audiences as string[] | undefined) ?? []) : [],
    paths: view.full ? ((row.paths as string[] | undefined) ?? []) : [],
    translations: view.full ? translations : {},
    language,
    // Audit images written before D63 have no dismissible: they were.
    dismissible: row.dismissible !== 0,
    version: row.version,
  });
}

/** An audit entry, with the message before and after the write as it was answered then (D48). */
export function toAuditEntry(r: AuditRow): AuditEntry {
  const message = (json: string | null) => (json === null ? undefined : toMessage(JSON.parse(json) as MessageRow, EDITING));
  return create(AuditEntrySchema, {
    id: BigInt(r.id),
    at: new Date(r.at).toISOString(),
    action: r.action,
    messageId: r.message_id,
    featureId: r.feature_id ?? undefined,
    clientId: r.client_id ?? undefined,
    keyId: r.key_id ?? undefined,
    issuer: r.issuer ?? undefined,
    subject: r.subject ?? undefined,
    before: message(r.before),
    after: message(r.after),
  });
}
