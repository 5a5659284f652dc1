// Stored messages as the API's messages: dates as written (D15), an unset
// feature as no field (REST writes it as null).
import { create } from "@bufbuild/protobuf";
import { AuditEntrySchema, MessageSchema, type AuditEntry, type Message } from "../../gen/meridian/featurestatus/v1/feature_status_pb.js";
import type { AuditEntryRecord } from "../audit/audit.js";
import { fromMessageImage } from "./message-image.js";
import { formatDate } from "./message-fields.js";
import type { MessageRecord } from "./message-store.js";
import { chooseLanguage } from "./languages.js";
import { EDITING, type View } from "../listings/reader-view.js";

/** A message as `view` reads it (D62: in the language it prefers), with its targeting and translations for BackOffice (D61). */
export function toMessage(row: MessageRecord, view: View): Message {
  const translations = row.translations;
  const language = chooseLanguage(Object.keys(translations), view.wish);
  const text = language === undefined ? row : translations[language];
  return create(MessageSchema, {
    id: row.id,
    featureId: row.featureId ?? undefined,
    type: row.type,
    title: text.title,
    body: text.body,
    startDate: formatDate(row.startDate),
    expiringDate: formatDate(row.expiringDate),
    audiences: view.full ? row.audiences : [],
    paths: view.full ? row.paths : [],
    translations: view.full ? translations : {},
    language,
    dismissible: row.dismissible,
    version: row.version,
  });
}

/** An audit entry, with the message before and after the write as it was answered then (D48). */
export function toAuditEntry(r: AuditEntryRecord): AuditEntry {
  const message = (json: string | null) => (json === null ? undefined : toMessage(fromMessageImage(json), EDITING));
  return create(AuditEntrySchema, {
    id: BigInt(r.id),
    at: new Date(r.at).toISOString(),
    action: r.action,
    messageId: r.messageId,
    featureId: r.featureId ?? undefined,
    clientId: r.clientId ?? undefined,
    keyId: r.keyId ?? undefined,
    issuer: r.issuer ?? undefined,
    subject: r.subject ?? undefined,
    before: message(r.before),
    after: message(r.after),
  });
}
