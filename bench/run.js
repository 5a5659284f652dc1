#!/usr/bin/env node
// npm run bench: runs every bench/<name>/bench.js in its own process, one
// after another (two cores: benchmarks must not overlap), and prints one
// table. Each benchmark prints JSON lines {bench, case, metric, value, min?, max?, unit,
// baseline?, ratio?} on stdout; anything else it prints goes to stderr.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
const benches = readdirSync(here, { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(join(here, d.name, "bench.js")))
  .map((d) => d.name)
  .filter((n) => only.length === 0 || only.includes(n));

const rows = [];
for (const name of benches) {
  process.stderr.write(`\n== bench/${name}\n`);
  const r = spawnSync(process.execPath, [join(here, name, "bench.js")], {
    stdio: ["ignore", "pipe", "inherit"],
    encoding: "utf8",
    maxBuffer: 64 << 20,
  });
  for (const line of r.stdout.split("\n")) {
    if (!line.startsWith("{")) continue;
    try {
      rows.push(JSON.parse(line));
    } catch {
      // not a result line: a benchmark's own output that began with "{"
    }
  }
  if (r.status !== 0) rows.push({ bench: name, case: "FAILED", metric: `exit ${r.status}`, value: "", unit: "" });
}

const fmt = (v) => (typeof v === "number" ? (Math.abs(v) >= 100 ? v.toFixed(0) : v.toPrecision(3)) : (v ?? ""));
const table = [
  ["bench", "case", "metric", "value", "min", "max", "unit", "baseline", "ratio"],
  ...rows.map((r) => [
    r.bench,
    r.case,
    r.metric,
    fmt(r.value),
    fmt(r.min),
    fmt(r.max),
    r.unit,
    fmt(r.baseline),
    r.ratio === undefined ? "" : `${fmt(r.ratio)}x`,
  ]),
];
const widths = table[0].map((_, i) => Math.max(...table.map((row) => String(row[i]).length)));
process.stdout.write("\n" + table.map((row) => row.map((c, i) => String(c).padEnd(widths[i])).join("  ")).join("\n") + "\n");
process.exitCode = rows.some((r) => r.case === "FAILED") ? 1 : 0;
