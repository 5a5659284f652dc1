// A message as written: the fields sent over what is there, each validated
// (D15-D17, D20) and its text sanitised; a write is refused whole, naming
// every field at fault, or stored as cleaned.
import { create, fromJson, toJson, type JsonObject } from "@bufbuild/protobuf";
import { ListValueSchema } from "@bufbuild/protobuf/wkt";
import { MessageFieldsSchema, type MessageFields } from "../../gen/meridian/featurestatus/v1/feature_status_pb.js";
import { ViolationList } from "../../kernel/errors.js";
import type { Scope } from "./access.js";
import { BODY_MAX, TITLE_MAX, formatDate, parseMessageType, parseZonedDate, withinLength } from "./message-fields.js";
import type { MessageData } from "./message-store.js";
import type { Sanitizer } from "./sanitize.js";
import { targetList } from "./targeting.js";
import { translationsOf } from "./languages.js";

/** D61, D62: a message for everyone, every page, in one language. */
const UNTARGETED = { audiences: [], paths: [], translations: {} };

/** A new message of `scope`: every field but the body is required. */
export function newMessage(scope: Scope, fields: MessageFields | undefined, sanitizer: Sanitizer): MessageData {
  const f = fields ?? ({} as MessageFields);
  const v = new ViolationList();
  for (const name of ["type", "title", "startDate", "expiringDate"] as const) if (f[name] === undefined) v.add(name, "is required");
  return validated(
    { featureId: scope, type: "", title: "", body: "", startDate: 0, expiringDate: 0, dismissible: true, ...UNTARGETED },
    f,
    sanitizer,
    v,
  );
}

/** D16: absent fields keep their value; the merge is validated as on create. featureId never changes. */
export function merged(existing: MessageData, fields: MessageFields | undefined, sanitizer: Sanitizer): MessageData {
  return validated(existing, fields ?? ({} as MessageFields), sanitizer);
}

/**
 * What a write of these fields would store, the fields not sent left out: the
 * write's own validation over a neutral message. Its dates are the ends of
 * time, so that a date sent alone meets no order it was not sent with.
 */
export function previewed(fields: MessageFields, sanitizer: Sanitizer): MessageFields {
  const neutral = {
    featureId: null,
    // Critical when the preview marks the message not dismissible, so that it meets no rule it was not sent with.
    type: fields.dismissible === false ? "Critical" : "Informational",
    title: "-",
    body: "",
    startDate: -Infinity,
    expiringDate: Infinity,
    dismissible: true,
    ...UNTARGETED,
  };
  const out = validated(neutral, fields, sanitizer);
  const list = (values: string[]) => fromJson(ListValueSchema, values);
  return create(MessageFieldsSchema, {
    type: fields.type === undefined ? undefined : out.type,
    title: fields.title === undefined ? undefined : out.title,
    body: fields.body === undefined ? undefined : out.body,
    startDate: fields.startDate === undefined ? undefined : formatDate(out.startDate),
    expiringDate: fields.expiringDate === undefined ? undefined : formatDate(out.expiringDate),
    audiences: fields.audiences === undefined ? undefined : list(out.audiences),
    paths: fields.paths === undefined ? undefined : list(out.paths),
    translations: fields.translations === undefined ? undefined : ({ ...out.translations } as unknown as JsonObject),
    dismissible: fields.dismissible === undefined ? undefined : out.dismissible,
  });
}

/** Applies the given fields over `base`, validating and sanitising the result (D15-D17, D20). */
function validated(base: MessageData, f: MessageFields, sanitizer: Sanitizer, v = new ViolationList()): MessageData {
  const out: MessageData = { ...base };
  const text = (field: string, kind: "title" | "body", t: string) => checkedText(field, kind, t, sanitizer, v);
  // D52: a read in a translation sent back would store that language's text as the default one.
  // eslint-disable-next-line @typescript-eslint/no-deprecated -- ignored for clients, read here to refuse one case
  if (f.language !== undefined)
    v.add("language", "is the language a read answered in: send the stored text (read the message by id), or language null");
  if (f.type !== undefined) out.type = parseMessageType(f.type, "type", v) ?? out.type;
  if (f.title !== undefined) out.title = text("title", "title", f.title) ?? out.title;
  if (f.body !== undefined) out.body = text("body", "body", f.body) ?? out.body;
  // D61, D62: sent, they replace what was stored; [] and {} clear it.
  if (f.audiences !== undefined) out.audiences = targetList("audiences", toJson(ListValueSchema, f.audiences), v) ?? out.audiences;
  if (f.paths !== undefined) out.paths = targetList("paths", toJson(ListValueSchema, f.paths), v) ?? out.paths;
  if (f.translations !== undefined) out.translations = translationsOf(f.translations, text, v) ?? out.translations;
  if (f.startDate !== undefined) out.startDate = parseZonedDate(f.startDate, "startDate", v) ?? out.startDate;
  if (f.expiringDate !== undefined) out.expiringDate = parseZonedDate(f.expiringDate, "expiringDate", v) ?? out.expiringDate;
  if (v.empty && out.expiringDate <= out.startDate) v.add("expiringDate", "must be after startDate");
  if (f.dismissible !== undefined) out.dismissible = f.dismissible;
  // D63: only what must be read may refuse dismissal; a message no longer Critical must be made dismissible with it.
  if (v.empty && !out.dismissible && out.type !== "Critical") v.add("dismissible", "may be false only for a Critical message");
  v.throwIfAny();
  return out;
}

/** A title or body, the default's or a translation's (D62), checked and sanitised (D17, D20), or undefined with a violation. */
function checkedText(field: string, kind: "title" | "body", text: string, sanitizer: Sanitizer, v: ViolationList): string | undefined {
  if (kind === "body") return cleaned(field, text, BODY_MAX, (b) => sanitizer.body(b), "holds markup outside the allowed HTML subset", v);
  const title = cleaned(field, text, TITLE_MAX, (t) => sanitizer.title(t), "holds encoded markup that cannot be made plain", v);
  if (title === "") return void v.add(field, "is empty once markup is removed");
  return title;
}

/**
 * A text field sanitised, or undefined with a violation. Its length (D17, D52)
 * is checked as sent and as it would be stored, so that what is read back and
 * sent unchanged is accepted again (sanitising may add closing tags).
 */
function cleaned(
  field: string,
  text: string,
  max: number,
  clean: (text: string) => string | undefined,
  refusal: string,
  v: ViolationList,
): string | undefined {
  const tooLong = `must be at most ${max} characters`;
  if (!withinLength(text, max)) return void v.add(field, tooLong);
  const out = clean(text);
  if (out === undefined) return void v.add(field, refusal);
  if (!withinLength(out, max)) return void v.add(field, tooLong);
  return out;
}
