#!/usr/bin/env node
// The Parquet writer (D64) chosen by measurement, on W1 (1,000,000 and
// 10,000,000 rows of one series, as encoded blocks): the addon's writer
// (src/timeseries/columnar/parquet*.ts, native/src/parquet-pages.*) against
// parquet-wasm (arrow-rs in WebAssembly, its streaming writer
// transformParquetStream, fed one record batch per block written by the
// addon's Arrow writer, zstd, row groups of at most 1,000,000 rows, delta timestamps
// and dictionaries as ours), and against the addon's JSON rows of the same
// blocks (the JSON read's encoder): rows/s, bytes a row, and the process's
// peak resident memory growth. Speed: the three in rounds in one process
// (median of BENCH_REPS, default 3, after a warm-up round; ratios within a
// round); memory: each in a process of its own (WebAssembly memory never
// shrinks), one write after a warm-up. The end-to-end figures by curl (Parquet against JSON
// over HTTP, server memory) are bench/values'. BENCH_ROWS=1000000 limits the
// sizes. Prints JSON rows for bench/run.js.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { FieldKind } from "../../dist/timeseries/blocks/block-codec.js";
import { encodeBlocks } from "../../dist/timeseries/blocks/block-store.js";
import { checkW1, columns, W1_FIELDS } from "../w1.js";
import { reporter } from "../report.js";

const sizes = (process.env.BENCH_ROWS ?? "1000000,10000000").split(",").map(Number);
const REPS = Number(process.env.BENCH_REPS ?? 3);
const WRITERS = ["json", "native", "wasm"];
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rssKiB = () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"))[1]);

/** W1's n rows as the store's blocks. */
function w1Blocks(n) {
  const { timestamps, values, flags } = columns(n);
  return encodeBlocks({
    timestamps,
    columns: [
      { kind: FieldKind.Single, values, missing: null },
      { kind: FieldKind.Flag, values: flags, missing: null },
    ],
  }).map((b) => b.payload);
}

/** A function that writes every block in the writer's form and returns the bytes written. */
async function writerOf(name, blocks) {
  const ALL = [-1e12, 1e12];
  if (name === "json") {
    const { jsonPooledRows } = await import("../../dist/timeseries/columnar/json-rows.js");
    const { leaseOf } = await import("../../dist/native/buffer-pool.js");
    return async () => {
      const encode = jsonPooledRows();
      let bytes = 0;
      blocks.forEach((b, i) => {
        const e = encode(b, ...ALL, Infinity, i === 0);
        bytes += e.out.length;
        leaseOf(e.out)?.release(); // as the transport does, once written
      });
      return bytes;
    };
  }
  if (name === "native") {
    const { parquetEncoder, parquetFrame } = await import("../../dist/timeseries/columnar/parquet.js");
    const series = { id: "w1", sid: 1, dataFields: W1_FIELDS };
    return async () => {
      async function* walk(encode) {
        yield { kind: "begin", series };
        for (const [i, b] of blocks.entries()) {
          const e = encode(b, ...ALL, Infinity, i === 0);
          yield { kind: "rows", out: e.out, rows: e.rows };
        }
        yield { kind: "end", series };
        return undefined;
      }
      let bytes = 0;
      const shape = { multi: false, paged: false, cursorFor: () => "", series: [series] };
      for await (const chunk of parquetFrame(walk(parquetEncoder()), shape)) bytes += chunk.length;
      return bytes;
    };
  }
  const pw = await import("parquet-wasm/node");
  const answers = await import("../../dist/native/arrow-ipc.js");
  const { PooledWriter, leaseOf } = await import("../../dist/native/buffer-pool.js");
  const schema = answers.arrowSchema(
    W1_FIELDS.map((f) => ({ name: f.name, kind: f.dataType === "Single" ? FieldKind.Single : FieldKind.Flag })),
    [],
  );
  const props = () =>
    new pw.WriterPropertiesBuilder()
      .setCompression(pw.Compression.ZSTD)
      .setMaxRowGroupSize(1_000_000)
      .setColumnDictionaryEnabled("timestamp", false)
      .setColumnEncoding("timestamp", pw.Encoding.DELTA_BINARY_PACKED)
      .build();
  return async () => {
    let i = 0;
    const pool = new PooledWriter();
    // One record batch per block, as the read decodes them: written by the addon's Arrow writer
    // (the Arrow answer's), taken into WebAssembly memory as a one-batch IPC stream.
    const batches = new ReadableStream({
      pull(controller) {
        if (i === blocks.length) {
          controller.close();
          return;
        }
        const r = answers.arrowBatchPooled(pool, blocks[i++], ...ALL, Infinity);
        const stream = Buffer.concat([schema, r.out, answers.ARROW_END_OF_STREAM]);
        leaseOf(r.out)?.release();
        controller.enqueue(pw.Table.fromIPCStream(stream).recordBatch(0));
      },
    });
    let bytes = 0;
    for await (const chunk of await pw.transformParquetStream(batches, props())) bytes += chunk.byteLength;
    return bytes;
  };
}

// Memory, a writer in a process of its own (WebAssembly memory never shrinks): node bench.js rss WRITER N
if (process.argv[2] === "rss") {
  const [name, n] = [process.argv[3], Number(process.argv[4])];
  const write = await writerOf(name, w1Blocks(n));
  await write(); // warm-up
  globalThis.gc?.();
  const before = rssKiB();
  let peak = before;
  const poll = setInterval(() => (peak = Math.max(peak, rssKiB())), 5);
  await write();
  clearInterval(poll);
  process.stdout.write(JSON.stringify({ growth: (Math.max(peak, rssKiB()) - before) / 1024 }) + "\n");
  process.exit(0);
}

const emit = reporter("parquet");
checkW1();
const self = fileURLToPath(import.meta.url);
for (const n of sizes) {
  const label = `${n / 1e6}M`;
  // Speed: the three writers in rounds, one of each a round, so that they see the same moments of
  // a noisy machine; the first round warms up.
  const blocks = w1Blocks(n);
  const writers = await Promise.all(WRITERS.map((name) => writerOf(name, blocks)));
  const times = WRITERS.map(() => []);
  const bytes = [];
  for (let round = 0; round <= REPS; round++) {
    for (const [i, write] of writers.entries()) {
      const t = performance.now();
      bytes[i] = await write();
      if (round > 0) times[i].push((performance.now() - t) / 1000);
    }
  }
  const [json, native, wasm] = times.map((t) => n / median(t) / 1e6);
  const ratio = (a, b) => median(times[a].map((t, r) => times[b][r] / t));
  emit(`${label} JSON rows (addon)`, "rows/s", json, "M rows/s");
  emit(`${label} JSON rows (addon)`, "bytes/row", bytes[0] / n, "B");
  emit(`${label} Parquet, addon writer`, "rows/s", native, "M rows/s", json, ratio(1, 0));
  emit(`${label} Parquet, parquet-wasm writer`, "rows/s", wasm, "M rows/s", json, ratio(2, 0));
  emit(`${label} Parquet, addon writer against parquet-wasm`, "rows/s", native, "M rows/s", wasm, ratio(1, 2));
  emit(`${label} Parquet, addon writer`, "bytes/row", bytes[1] / n, "B", bytes[0] / n);
  emit(`${label} Parquet, parquet-wasm writer`, "bytes/row", bytes[2] / n, "B", bytes[0] / n);
  for (const name of WRITERS) {
    const r = spawnSync(process.execPath, ["--expose-gc", self, "rss", name, String(n)], {
      stdio: ["ignore", "pipe", "inherit"],
      encoding: "utf8",
    });
    if (r.status !== 0) throw new Error(`rss ${name} ${n}: exit ${r.status}`);
    emit(`${label} ${name}`, "process RSS growth", JSON.parse(r.stdout.trim().split("\n").at(-1)).growth, "MiB");
  }
}
