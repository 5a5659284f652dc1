#!/usr/bin/env node
// Seed corpus for block_fuzz: real blocks from the release addon's encoder,
// one per scheme and shape, and their summaries, without their 4-byte checksum (the target appends
// it). Small blocks, so that the fuzzer spends its time on mutations.
// Usage: node native/fuzz/seeds.mjs <dir>
import { mkdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const addon = createRequire(import.meta.url)(join(here, "..", "build", "Release", "meridian_native.node"));
const [SINGLE, DOUBLE, FLAG] = [0, 1, 2];
const MIN = -62_135_596_800; // D24
const MAX = 253_402_300_799;

const n = (rows, f) => Array.from({ length: rows }, (_, i) => f(i));
const regular = (rows, start = 946_684_800, step = 60) => Float64Array.from(n(rows, (i) => start + step * i));
const blocks = {
  // W1-like: 3-decimal levels and rare flags every minute, the common case.
  w1: [
    regular(200),
    [
      [SINGLE, Float32Array.from(n(200, (i) => Math.round((12 + 0.35 * Math.sin(i / 11)) * 1000) / 1000)), null],
      [FLAG, Int32Array.from(n(200, (i) => (i > 90 && i < 110 ? 2 : 0))), null],
    ],
  ],
  // Noise: the raw scheme, NaN and infinities, and a missing bitmap.
  noise: [
    regular(64, 0, 1),
    [
      [
        SINGLE,
        Float32Array.from(n(64, (i) => (i === 3 ? NaN : i === 4 ? -Infinity : Math.sin(i * 7.3) * 1e30))),
        Uint8Array.from(n(64, (i) => i % 5 === 0)),
      ],
    ],
  ],
  // Doubles with decimal exceptions, irregular gaps, large flag ids.
  mixed: [
    Float64Array.from(n(40, (i) => i * 3600 + (i > 20 ? 17 : 0) + (i > 30 ? 86_400 * 400 : 0))),
    [
      [DOUBLE, Float64Array.from(n(40, (i) => (i % 7 === 0 ? Math.PI * i : i / 100))), null],
      [FLAG, Int32Array.from(n(40, (i) => (i % 2 ? -(2 ** 31) : 2 ** 31 - 1 - i))), Uint8Array.from(n(40, (i) => i === 5))],
    ],
  ],
  // All missing, one row, no columns, and the ends of D24.
  allMissing: [regular(10), [[DOUBLE, new Float64Array(10), new Uint8Array(10).fill(1)]]],
  oneRow: [Float64Array.of(0), [[DOUBLE, Float64Array.of(-0), null]]],
  noColumns: [regular(5, MIN, 1), []],
  d24: [Float64Array.of(MIN, 0, MAX), [[SINGLE, Float32Array.of(1.5, 2.5, 3.5), null]]],
};

const dir = process.argv[2];
if (!dir) throw new Error("usage: node native/fuzz/seeds.mjs <dir>");
mkdirSync(dir, { recursive: true });
for (const [name, [timestamps, columns]] of Object.entries(blocks)) {
  const block = addon.encodeBlock(
    timestamps,
    Uint8Array.from(columns, (c) => c[0]),
    columns.map((c) => c[1]),
    columns.map((c) => c[2]),
  );
  writeFileSync(join(dir, name), block.subarray(0, block.length - 4));
  // Its summary (D65), which the target also reads as one.
  const summary = addon.summarizeBlock(block);
  writeFileSync(join(dir, `${name}.summary`), summary.subarray(0, summary.length - 4));
}
