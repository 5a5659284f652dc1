// Errors of JSON request bodies in the caller's terms (D8): the field as the
// caller spells it and what is wrong with it, never the internal protobuf
// type names protobuf-es puts in its messages
// ("cannot decode message meridian.featurestatus.v1.MessageFields from JSON").
import { fromJsonString, type DescMessage } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { invalidField } from "./errors.js";

/** A ConnectError for a JSON body that protobuf-es refused (or a ConnectError already). */
export function jsonInputError(e: unknown): ConnectError {
  if (e instanceof ConnectError) return e;
  const cause = (e as Error).cause;
  if (cause instanceof SyntaxError) return invalidField("body", `malformed JSON: ${cause.message}`);
  if (isFieldError(cause)) {
    const field = cause.field();
    return invalidField(field.jsonName ?? field.name, publicText(cause.message));
  }
  return invalidField("body", publicText(e instanceof Error ? e.message : String(e)));
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
        fromJsonString(schema, text, { ignoreUnknownFields: true });
      } catch (e) {
        throw jsonInputError(e);
      }
      return text;
    },
  };
}

/** protobuf-es gives fromJson's error a FieldError cause naming the field (not exported, hence the shape test). */
function isFieldError(e: unknown): e is Error & { field(): { name: string; jsonName?: string } } {
  return e instanceof Error && typeof (e as { field?: unknown }).field === "function";
}
