// Reference workload W1 (../shared/bench/README.md), generated here so that a
// clone without ../shared can run the benchmarks. Same rows as gen.mjs: the
// CSV form of 1,000,000 rows has sha256 W1_CSV_SHA256, checked by the bench.
import { createHash } from "node:crypto";

export const START = 946684800;
export const STEP = 60;
export const W1_CSV_SHA256 = "cbf1e8cd1003b6ebd31fdc262093614c32ab81ca4a66aa8bcc15c5004a0060d2";

/** A W1 series' data fields: the value, then the flag. */
export const W1_FIELDS = [
  { name: "value", dataType: "Single" },
  { name: "flag", dataType: "Flag" },
];

/** Throws unless this generator writes W1 itself (the published checksum of its 1,000,000-row CSV). */
export function checkW1() {
  const hash = createHash("sha256");
  for (const chunk of text(1_000_000, "csv")) hash.update(chunk);
  if (hash.digest("hex") !== W1_CSV_SHA256) throw new Error("bench/w1.js does not generate W1 (checksum mismatch)");
  process.stderr.write("W1 generator checksum ok\n");
}

function mulberry32(seed) {
  let a = seed >>> 0;
  return function () {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TWO_PI = 2 * Math.PI;

/** Yields [epochSeconds, valueText, flag] for rows 0..n-1. */
export function* rows(n) {
  const rnd = mulberry32(20000101);
  let flag = 0;
  for (let i = 0; i < n; i++) {
    const smooth =
      12.0 + 0.8 * Math.sin((TWO_PI * i) / 525960) + 0.35 * Math.sin((TWO_PI * i) / 745.2) + 0.3 * Math.sin((TWO_PI * i) / 43200 + 1.3);
    const noise = (rnd() + rnd() - 1) * 0.004;
    const vText = (Math.round((smooth + noise) * 1000) / 1000).toFixed(3);
    const r = rnd();
    if (flag === 0) {
      if (r < 1 / 20000) flag = 1 + Math.floor(rnd() * 3);
    } else if (r < 1 / 240) flag = 0;
    yield [START + i * STEP, vText, flag];
  }
}

/**
 * The rows of rows(n) as columns, `size` rows at a time (for series too long
 * to hold: 1B rows), the same values without the text: Math.round(x * 1000) /
 * 1000 is the double nearest the three-decimal text, which is what Number()
 * reads back from it.
 */
export function* columnChunks(n, size) {
  const rnd = mulberry32(20000101);
  let flag = 0;
  for (let at = 0; at < n; at += size) {
    const m = Math.min(size, n - at);
    const timestamps = new Float64Array(m);
    const values = new Float32Array(m);
    const flags = new Int32Array(m);
    for (let k = 0; k < m; k++) {
      const i = at + k;
      const smooth =
        12.0 + 0.8 * Math.sin((TWO_PI * i) / 525960) + 0.35 * Math.sin((TWO_PI * i) / 745.2) + 0.3 * Math.sin((TWO_PI * i) / 43200 + 1.3);
      const noise = (rnd() + rnd() - 1) * 0.004;
      values[k] = Math.round((smooth + noise) * 1000) / 1000;
      const r = rnd();
      if (flag === 0) {
        if (r < 1 / 20000) flag = 1 + Math.floor(rnd() * 3);
      } else if (r < 1 / 240) flag = 0;
      timestamps[k] = START + i * STEP;
      flags[k] = flag;
    }
    yield { timestamps, values, flags };
  }
}

/** The W1 rows as columns. */
export function columns(n) {
  const timestamps = new Float64Array(n);
  const values = new Float32Array(n);
  const flags = new Int32Array(n);
  let i = 0;
  for (const [t, v, f] of rows(n)) {
    timestamps[i] = t;
    values[i] = Number(v);
    flags[i++] = f;
  }
  return { timestamps, values, flags };
}

const pad = (x) => (x < 10 ? "0" + x : "" + x);
export function isoTime(t) {
  const d = new Date(t * 1000);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}

/** Text of rows in the form `csv` (epoch seconds) or `iso` (what `meridian import` reads), in chunks. */
export function* text(n, form) {
  let buf = "";
  let k = 0;
  for (const [t, v, f] of rows(n)) {
    buf += form === "csv" ? `${t},${v},${f}\n` : `${isoTime(t)},${v},${f}\n`;
    if (++k === 20000) {
      yield buf;
      buf = "";
      k = 0;
    }
  }
  if (buf) yield buf;
}

// CLI: node bench/w1.js N [csv|iso] > file
if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const n = Number(process.argv[2]);
  const form = process.argv[3] ?? "iso";
  if (!Number.isInteger(n) || n <= 0 || !["csv", "iso"].includes(form)) {
    process.stderr.write("usage: node bench/w1.js N [csv|iso]\n");
    process.exit(2);
  }
  for (const chunk of text(n, form)) if (!process.stdout.write(chunk)) await new Promise((r) => process.stdout.once("drain", r));
}
