// Validation of message input (D15-D18): required fields, the severity,
// dates, lengths in code points, feature ids. Every failure names its field.
import { decodeHTML } from "entities";
import type { ViolationList } from "../transport/errors.js";

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
    v.add(field, /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(text) ? "must carry a zone: Z or an offset such as +02:00" : "must be an ISO 8601 date-time such as 2026-01-31T08:00:00Z");
    return undefined;
  }
  const [, y, mo, d, h, mi, s = "0", z, sign, oh, om] = m;
  const nums = [y, mo, d, h, mi, s].map(Number);
  const ms = Date.UTC(nums[0], nums[1] - 1, nums[2], nums[3], nums[4], nums[5]);
  const back = new Date(ms);
  const valid =
    nums[0] >= 1 &&
    back.getUTCFullYear() === nums[0] &&
    back.getUTCMonth() === nums[1] - 1 &&
    back.getUTCDate() === nums[2] &&
    nums[3] < 24 &&
    nums[4] < 60 &&
    nums[5] < 60 &&
    (z !== undefined || (Number(oh) < 24 && Number(om) < 60));
  if (!valid) {
    v.add(field, "is not a valid date-time");
    return undefined;
  }
  const offset = z !== undefined ? 0 : (sign === "-" ? -1 : 1) * (Number(oh) * 60 + Number(om)) * 60;
  // Date.UTC maps years 0-99 to 1900-1999; the round trip above already refused those.
  return Math.floor(ms / 1000) - offset;
}

/** The clock of message windows and retention: whole seconds since the epoch. */
export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** yyyy-MM-ddTHH:mm:ssZ (D15). */
export function formatDate(epochSeconds: number): string {
  return new Date(epochSeconds * 1000).toISOString().slice(0, 19) + "Z";
}
