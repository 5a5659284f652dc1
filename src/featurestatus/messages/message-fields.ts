// Validation of message input (D15-D18): required fields, the severity,
// dates, lengths in code points, feature ids. Every failure names its field.
import { decodeHTML } from "entities";
import type { ViolationList } from "../../kernel/errors.js";
import { MAX_TIMESTAMP, MIN_TIMESTAMP, formatTimestamp, secondsOf } from "../../kernel/timestamps.js";

export const MESSAGE_TYPES = ["Critical", "Warning", "Informational"] as const;
export type MessageType = (typeof MESSAGE_TYPES)[number];

export const TITLE_MAX = 255;
export const BODY_MAX = 4000;

/** D17: code points, not UTF-16 units. */
export function codePoints(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/**
 * D17, D52: a text's length as a reader sees it, in code points, a character
 * reference (&lt;, &#60;) counting as the one character it stands for. So a
 * message read and sent back unchanged measures what it measured before.
 */
export function readerLength(text: string): number {
  return codePoints(decodeHTML(text));
}

/**
 * Whether `text` is at most `max` characters as a reader sees them. No
 * character reference is longer than 33 UTF-16 units
 * (&CounterClockwiseContourIntegral;), so text over 40 units per character is
 * refused before any decoding or sanitising: the work stays bounded.
 */
export function withinLength(text: string, max: number): boolean {
  return text.length <= 40 * max && readerLength(text) <= max;
}

export function parseMessageType(value: string, field: string, v: ViolationList): MessageType | undefined {
  const hit = MESSAGE_TYPES.find((t) => t === value);
  if (!hit) v.add(field, `must be one of ${MESSAGE_TYPES.join(", ")}`);
  return hit;
}

// ISO 8601 date-time with a zone: Z or an offset (D15). Fractions of a second are accepted and dropped.
const isoRe = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d+)?)?(?:([Zz])|([+-])(\d{2}):?(\d{2}))$/;

/** Epoch seconds of an ISO 8601 timestamp with a zone, or undefined (and a violation). */
export function parseZonedDate(text: string, field: string, v: ViolationList): number | undefined {
  const m = isoRe.exec(text);
  if (!m) {
    v.add(
      field,
      /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(text)
        ? "must carry a zone: Z or an offset such as +02:00"
        : "must be an ISO 8601 date-time such as 2026-01-31T08:00:00Z",
    );
    return undefined;
  }
  const [, y, mo, d, h, mi, s = "0"] = m;
  // The zone is Z or an offset: the groups of the other are undefined.
  const zone: readonly (string | undefined)[] = m.slice(7);
  const [z, sign, oh = "0", om = "0"] = zone;
  // Civil arithmetic, not Date.UTC, which reads years 0-99 as 1900-1999.
  const local = secondsOf(+y, +mo, +d, +h, +mi, +s);
  if (local === undefined || (z === undefined && (+oh > 23 || +om > 59))) {
    v.add(field, "is not a valid date-time");
    return undefined;
  }
  const offset = z !== undefined ? 0 : (sign === "-" ? -1 : 1) * (+oh * 60 + +om) * 60;
  const utc = local - offset;
  // D52: an offset may carry a date in range out of it; such a date could not be written back.
  if (utc < MIN_TIMESTAMP || utc > MAX_TIMESTAMP) {
    v.add(field, "must lie in 0001-01-01T00:00:00Z..9999-12-31T23:59:59Z once converted to UTC");
    return undefined;
  }
  return utc;
}

/** The clock of message windows and retention: whole seconds since the epoch. */
export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** yyyy-MM-ddTHH:mm:ssZ (D15), years 0001-9999 included. */
export function formatDate(epochSeconds: number): string {
  return formatTimestamp(epochSeconds) + "Z";
}
