// What a values or chart read answers in on REST (D64): JSON rows (D25), an
// Apache Arrow IPC stream, or a Parquet file (parquet.ts),
// chosen by the request's Accept header as negotiator ranks it; JSON when the
// client says nothing or accepts anything, and for `text/plain`, which the
// platform's SDK sends while it parses JSON (D7). An Accept that allows none
// of them is a 406 (NOT_ACCEPTABLE), before any work is done.
//
// Every format is the same two parts: an encoder, called by the value walk
// (value-walk.ts) for each block's rows of the read, and a framing that turns
// the walk's steps (a series begins, rows, a series ends, the page's cursor)
// into the bytes of the answer (answer-format.ts). A new format is one more
// entry in FORMATS.
import Negotiator from "negotiator";
import { failure } from "../../kernel/errors.js";
import { JSON_CONTENT_TYPE } from "../../http/media-types.js";
import { jsonText } from "../value-json.js";
import type { AnswerFormat } from "./answer-format.js";
import { arrowFormat } from "./arrow.js";
import { jsonPooledRows } from "./json-rows.js";
import { parquetFormat } from "./parquet.js";

export const JSON_FORMAT: AnswerFormat<Uint8Array> = {
  mediaType: "application/json",
  aliases: ["text/plain"], // D7
  contentType: JSON_CONTENT_TYPE,
  encoders: () => ({ block: jsonPooledRows() }),
  frame: (steps, shape) => jsonText(steps, shape, (at) => shape.cursorFor(at)),
};

/** In order of preference when the client ranks several alike: the first is the default. */
export const FORMATS: readonly AnswerFormat<never>[] = [JSON_FORMAT, arrowFormat, parquetFormat] as AnswerFormat<never>[];

/** The media types of the formats besides JSON (the OpenAPI document lists them). */
export const COLUMNAR_MEDIA_TYPES: readonly string[] = FORMATS.filter((f) => f !== JSON_FORMAT).map((f) => f.mediaType);

/**
 * What is offered to negotiator: each format by the content type it answers
 * with, parameters included, so that a range naming them
 * (`application/json; charset=utf-8`) matches as well as the bare type.
 */
const OWN = new Map(FORMATS.map((f) => [f.contentType, f]));
interface Alias {
  format: AnswerFormat<never>;
  /** The type as a client names it. */
  named: string;
}
/** The aliases, offered after every format's own type: a wildcard ties to a format first. */
const ALIASES = new Map<string, Alias>(
  FORMATS.flatMap((f) => (f.aliases ?? []).map((named) => [`${named}; charset=utf-8`, { format: f, named }])),
);
const OFFERED = [...OWN.keys(), ...ALIASES.keys()];

/** The format an Accept header asks for; a 406 when it allows none. */
export function answerFormatFor(accept: string | null): AnswerFormat {
  // negotiator reads only headers.accept; undefined means "anything" (RFC 9110, 12.5.1).
  const negotiator = new Negotiator({ headers: { accept: accept ?? undefined } });
  const ranges = negotiator.mediaTypes().map((t) => t.toLowerCase());
  // In the client's order of preference: a format's own type, or an alias it names.
  for (const offered of negotiator.mediaTypes(OFFERED)) {
    const format = OWN.get(offered) ?? aliased(ranges, offered);
    if (format) return format;
  }
  const named = FORMATS.map((f) => f.mediaType).join(", ");
  throw failure("NOT_ACCEPTABLE", `Accept allows none of the media types this read answers in: ${named}`);
}

/**
 * The format of an alias the client names (D7: the SDK's text/plain), itself
 * or by its type's wildcard ("text/" and a star); reached through the any-type
 * wildcard alone it is not named: formats refused with q=0 beside that stay refused.
 */
function aliased(ranges: readonly string[], offered: string): AnswerFormat | undefined {
  const alias = ALIASES.get(offered);
  if (!alias) return undefined;
  const wildcard = `${alias.named.split("/")[0]}/*`;
  return ranges.some((r) => r === alias.named || r === wildcard) ? alias.format : undefined;
}
