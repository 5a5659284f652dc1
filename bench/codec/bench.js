#!/usr/bin/env node
// Storage engine (issue 4) on W1 (1,000,000 and 10,000,000 rows) and on float32
// noise: bytes per row, encode and decode rows/s of the native codec against
// two TypeScript baselines in the same run (ratios), on one core: ts-codec.js,
// a simple format, and ts-port.js, the same format decoded in TypeScript; then
// `meridian import` of W1 as CSV: rows/s and bytes per row of the database file.
// BENCH_ROWS=1000000 limits the sizes. Prints JSON rows for bench/run.js.
import { spawnSync } from "node:child_process";
import { createWriteStream, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { BLOCK_ROWS, FieldKind, decodeBlock, encodeBlock } from "../../dist/timeseries/blocks/block-codec.js";
import { openDatabase } from "../../dist/sqlite/database.js";
import { SqliteMetadataStore as MetadataStore } from "../../dist/sqlite/metadata-store.js";
import { W1_FIELDS, checkW1, columns, text } from "../w1.js";
import { reporter } from "../report.js";
import * as baseline from "./ts-codec.js";
import * as port from "./ts-port.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const sizes = (process.env.BENCH_ROWS ?? "1000000,10000000").split(",").map(Number);
const emit = reporter("codec");

checkW1();

/** Best of `reps` runs of fn, in seconds. */
function best(reps, fn) {
  let min = Infinity;
  for (let r = 0; r < reps; r++) {
    const t = performance.now();
    fn();
    min = Math.min(min, (performance.now() - t) / 1000);
  }
  return min;
}

/** Best of 5 decodes of every block, in seconds; each must give back all n rows (rowsOf decodes one block). */
function decodeTime(blocks, n, rowsOf) {
  return best(5, () => {
    let rows = 0;
    for (const b of blocks) rows += rowsOf(b);
    if (rows !== n) throw new Error("decoded row count mismatch");
  });
}

/** The port must decode exactly what the addon decodes, bit for bit, or its timing means nothing. */
function sameBlock(a, b) {
  const bytes = (x) => (x === null ? "null" : Buffer.from(x.buffer, x.byteOffset, x.byteLength).toString("base64"));
  const same =
    bytes(a.timestamps) === bytes(b.timestamps) &&
    a.columns.every((c, i) => bytes(c.values) === bytes(b.columns[i].values) && bytes(c.missing) === bytes(b.columns[i].missing));
  if (!same) throw new Error("ts-port.js decodes a block differently from the addon");
}

function measure(name, { timestamps, values, flags }) {
  const n = timestamps.length;
  const blocks = [];
  for (let s = 0; s < n; s += BLOCK_ROWS) blocks.push([s, Math.min(n, s + BLOCK_ROWS)]);
  const native = [];
  const ts = [];
  const encNative = best(3, () => {
    native.length = 0;
    for (const [s, e] of blocks) {
      native.push(
        encodeBlock({
          timestamps: timestamps.subarray(s, e),
          columns: [
            { kind: FieldKind.Single, values: values.subarray(s, e), missing: null },
            { kind: FieldKind.Flag, values: flags.subarray(s, e), missing: null },
          ],
        }),
      );
    }
  });
  const encTs = best(3, () => {
    ts.length = 0;
    for (const [s, e] of blocks) ts.push(baseline.encode(timestamps.subarray(s, e), values.subarray(s, e), flags.subarray(s, e)));
  });
  const decNative = decodeTime(native, n, (b) => decodeBlock(b).timestamps.length);
  const decTs = decodeTime(ts, n, (b) => baseline.decode(b).ts.length);
  for (const b of native) sameBlock(port.decode(b), decodeBlock(b));
  const decPort = decodeTime(native, n, (b) => port.decode(b).timestamps.length);
  const nativeBytes = native.reduce((a, b) => a + b.length, 0);
  const tsBytes = ts.reduce((a, b) => a + b.length, 0);
  emit(name, "bytes/row native", nativeBytes / n, "B", tsBytes / n);
  emit(name, "encode native", n / encNative / 1e6, "M rows/s", n / encTs / 1e6);
  emit(name, "decode native", n / decNative / 1e6, "M rows/s", n / decTs / 1e6);
  emit(name, "decode native vs TS port of the format", n / decNative / 1e6, "M rows/s", n / decPort / 1e6);
}

for (const n of sizes) {
  measure(`W1 ${n.toLocaleString("en")} rows`, columns(n));
}
{
  const n = sizes[0];
  const w1 = columns(n);
  const noise = new Float32Array(n);
  let seed = 1;
  for (let i = 0; i < n; i++) noise[i] = Math.fround(((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32) * 2 - 1);
  measure(`float32 noise ${n.toLocaleString("en")} rows`, { ...w1, values: noise });
}

// Import from CSV through the real CLI, and the database file it leaves.
const dir = mkdtempSync(join(tmpdir(), "meridian-codec-"));
try {
  for (const n of sizes) {
    const csv = join(dir, `w1-${n}.csv`);
    const file = createWriteStream(csv);
    for (const chunk of text(n, "iso")) if (!file.write(chunk)) await new Promise((r) => file.once("drain", r));
    await new Promise((r) => file.end(r));
    const dbPath = join(dir, `w1-${n}.db`);
    const db = openDatabase(dbPath);
    const meta = new MetadataStore(db);
    const dataset = "00000000-0000-0000-0000-00000000000a";
    meta.createDataset({ id: dataset, project: "bench", items: [], properties: [], metadata: {} });
    const series = meta.createSeries({
      id: "00000000-0000-0000-0000-00000000000b",
      datasetId: dataset,
      item: {},
      properties: {},
      dataFields: W1_FIELDS,
    });
    db.close();
    const r = spawnSync(process.execPath, [join(root, "bin", "meridian.js"), "import", "--dataset", dataset, "--series", series.id, csv], {
      env: { ...process.env, MERIDIAN_DB: dbPath },
      encoding: "utf8",
    });
    const m = /in ([0-9.]+) s/.exec(r.stdout);
    if (r.status !== 0 || !m) throw new Error(`import failed: ${r.stderr}`);
    const check = openDatabase(dbPath);
    check.pragma("wal_checkpoint(TRUNCATE)");
    check.close();
    emit(`import W1 ${n.toLocaleString("en")} rows`, "CSV import", n / Number(m[1]) / 1e6, "M rows/s");
    emit(`import W1 ${n.toLocaleString("en")} rows`, "database file", statSync(dbPath).size / n, "B/row");
    rmSync(csv);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
