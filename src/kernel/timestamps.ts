// D24 timestamps: whole seconds, UTC, 0001-01-01T00:00:00 to 9999-12-31T23:59:59.
// Civil dates are converted arithmetically (days from 0000-03-01, after Howard
// Hinnant's algorithm), because Date treats years below 100 as 19xx.

/** D24: 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z in epoch seconds. */
export const MIN_TIMESTAMP = -62_135_596_800;
export const MAX_TIMESTAMP = 253_402_300_799;

// The time with both colons or none: the second separator repeats the first.
export const QUERY_FORM = /^(\d{4})-(\d{2})-(\d{2})T(\d{2})(:?)(\d{2})\5(\d{2})Z?$/;

/** Days since 1970-01-01 of a proleptic Gregorian date. */
export function daysFromCivil(y: number, m: number, d: number): number {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

function civilFromDays(z: number): [number, number, number] {
  z += 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp + (mp < 10 ? 3 : -9);
  return [yoe + era * 400 + (m <= 2 ? 1 : 0), m, d];
}

function daysInMonth(y: number, m: number): number {
  return m === 2 ? (y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28) : [31, 0, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1];
}

/** Epoch seconds of a valid civil date and time, or undefined. */
export function secondsOf(y: number, mo: number, d: number, h: number, mi: number, s: number): number | undefined {
  if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo) || h > 23 || mi > 59 || s > 59) return undefined;
  return daysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s;
}

/** `yyyy-MM-ddTHHmmss` or `yyyy-MM-ddTHH:mm:ss`, an optional `Z` (D24); undefined when it is neither. */
export function parseTimestamp(text: string): number | undefined {
  const m = QUERY_FORM.exec(text);
  return m ? secondsOf(+m[1], +m[2], +m[3], +m[4], +m[6], +m[7]) : undefined;
}

const digit = (s: string, i: number) => s.charCodeAt(i) - 48;
const two = (s: string, i: number) => {
  const a = digit(s, i);
  const b = digit(s, i + 1);
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : NaN;
};

/**
 * The row form `yyyy-MM-ddTHH:mm:ss`, optionally with Z, in s[0, end): read by
 * character codes, since the CSV import runs it once per row.
 */
export function parseRowTimestamp(s: string, end: number): number | undefined {
  if (!(end === 19 || (end === 20 && s.charCodeAt(19) === 90))) return undefined;
  if (s[4] !== "-" || s[7] !== "-" || s[10] !== "T" || s[13] !== ":" || s[16] !== ":") return undefined;
  const t = secondsOf(two(s, 0) * 100 + two(s, 2), two(s, 5), two(s, 8), two(s, 11), two(s, 14), two(s, 17));
  return t === undefined || Number.isNaN(t) ? undefined : t;
}

const pad2 = (n: number) => String(n).padStart(2, "0");

/** The row form `yyyy-MM-ddTHH:mm:ss`. */
export function formatTimestamp(t: number): string {
  const days = Math.floor(t / 86400);
  const rest = t - days * 86400;
  const [y, m, d] = civilFromDays(days);
  return `${String(y).padStart(4, "0")}-${pad2(m)}-${pad2(d)}T${pad2(Math.floor(rest / 3600))}:${pad2(Math.floor(rest / 60) % 60)}:${pad2(rest % 60)}`;
}
