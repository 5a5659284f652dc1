// Errors of JSON request bodies in the caller's terms (D8): the field as the
// caller spells it and what is wrong with it, never the internal protobuf
// type names protobuf-es puts in its messages
// ("cannot decode message meridian.featurestatus.v1.MessageFields from JSON").
import { fromJsonString, type DescField, type DescMessage, type JsonValue } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { invalidArgument, invalidField } from "../kernel/errors.js";

/**
 * A ConnectError for a JSON body that protobuf-es refused (or a ConnectError
 * already). Given the body and its type, a list or struct field holding
 * something else is named, which protobuf-es's error does not do.
 */
export function jsonInputError(e: unknown, schema?: DescMessage, json?: JsonValue): ConnectError {
  if (e instanceof ConnectError) return e;
  const cause = (e as Error).cause;
  if (cause instanceof SyntaxError) return invalidField("body", `malformed JSON: ${cause.message}`, "MALFORMED_BODY");
  if (isFieldError(cause)) {
    const field = cause.field();
    return invalidField(field.jsonName ?? field.name, publicText(cause.message));
  }
  const misshapen = schema && json !== undefined ? misshapenWellKnown(schema, json, "") : undefined;
  if (misshapen) return invalidField(misshapen.path, misshapen.message);
  return invalidField("body", publicText(e instanceof Error ? e.message : String(e)));
}

const WELL_KNOWN_SHAPES: Partial<Record<string, { ok: (v: JsonValue) => boolean; message: string }>> = {
  "google.protobuf.ListValue": { ok: (v) => Array.isArray(v), message: "must be an array" },
  "google.protobuf.Struct": { ok: (v) => typeof v === "object" && !Array.isArray(v), message: "must be an object" },
};

/** The first field (by its path in the body) whose ListValue or Struct holds another kind of JSON value. */
function misshapenWellKnown(schema: DescMessage, json: JsonValue, prefix: string): { path: string; message: string } | undefined {
  if (json === null || typeof json !== "object" || Array.isArray(json)) return undefined;
  for (const [key, value] of Object.entries(json)) {
    const f = schema.fields.find((x) => x.jsonName === key || x.name === key);
    if (f?.fieldKind !== "message" || value === null) continue;
    const shape = WELL_KNOWN_SHAPES[f.message.typeName];
    if (shape && !shape.ok(value)) return { path: prefix + key, message: shape.message };
    if (!f.message.typeName.startsWith("google.protobuf.")) {
      const inner = misshapenWellKnown(f.message, value, `${prefix}${key}.`);
      if (inner) return inner;
    }
  }
  return undefined;
}

/** protobuf-es's message text without the type names it starts with. */
export function publicText(message: string): string {
  const text = message
    .replace(/cannot decode (?:message |field |enum )?[\w.]+ from JSON:? ?/g, "")
    .replace(/\bmeridian\.[\w.]+/g, "the message")
    .trim();
  return text === "" ? "malformed value" : `malformed value: ${text}`;
}

/**
 * The text decoder Connect's JSON serialisation of one method's input uses:
 * it decodes (dropping a UTF-8 byte-order mark, D52) and checks the text
 * against the input type, so that a bad body is refused with jsonInputError
 * before Connect's own parse (which would name the type) sees it.
 */
export function checkedJsonDecoder(schema: DescMessage): { decode(data: Uint8Array): string } {
  const utf8 = new TextDecoder();
  return {
    decode(data) {
      const text = utf8.decode(data);
      try {
        // protobuf-es's own parse, for what JSON.parse lets through (a key given twice).
        fromJsonString(schema, text, { ignoreUnknownFields: true });
      } catch (e) {
        throw jsonInputError(e, schema, parsedOrUndefined(text));
      }
      rejectUnknownFields(schema, JSON.parse(text) as JsonValue);
      return text;
    },
  };
}

function parsedOrUndefined(text: string): JsonValue | undefined {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return undefined;
  }
}

/** protobuf-es gives fromJson's error a FieldError cause naming the field (not exported, hence the shape test). */
function isFieldError(e: unknown): e is Error & { field(): { name: string; jsonName?: string } } {
  return e instanceof Error && typeof (e as { field?: unknown }).field === "function";
}

/**
 * Refuses a body holding a field its type does not have (D59), naming each by
 * its path from the body (`item.nmae`), so that a typo is not dropped without
 * a word. `json` is what `field` (or, without one, a `schema` message) holds.
 */
export function rejectUnknownFields(schema: DescMessage, json: JsonValue, field?: DescField): void {
  const unknown = field ? unknownInField(field, json, "") : unknownFields(schema, json, "");
  if (unknown.length > 0)
    throw invalidArgument(Object.fromEntries(unknown.map((path) => [path, ["unknown field"]])), undefined, "UNKNOWN_FIELD");
}

function unknownFields(schema: DescMessage, json: JsonValue, prefix: string): string[] {
  // The well-known types have JSON forms of their own (Struct holds any keys).
  if (schema.typeName.startsWith("google.protobuf.") || json === null || typeof json !== "object" || Array.isArray(json)) return [];
  const out: string[] = [];
  for (const [key, value] of Object.entries(json)) {
    const f = schema.fields.find((x) => x.jsonName === key || x.name === key);
    if (!f) out.push(prefix + key);
    else out.push(...unknownInField(f, value, `${prefix}${key}.`));
  }
  return out;
}

function unknownInField(f: DescField, value: JsonValue, prefix: string): string[] {
  switch (f.fieldKind) {
    case "message":
      return unknownFields(f.message, value, prefix);
    case "list":
      if (f.listKind !== "message" || !Array.isArray(value)) return [];
      return value.flatMap((v, i) => unknownFields(f.message, v, `${prefix.slice(0, -1)}[${i}].`));
    case "map":
      if (f.mapKind !== "message" || value === null || typeof value !== "object" || Array.isArray(value)) return [];
      return Object.entries(value).flatMap(([k, v]) => unknownFields(f.message, v, `${prefix}${k}.`));
    default:
      return [];
  }
}
