#!/usr/bin/env node
// Columnar ingest (issue 41 item 6, D69): 10M W1 rows into one series
//   arrow upload:   Arrow IPC streams (the columns a read answers) POSTed to .../values
//   parquet upload: Parquet files (zstd, as our reads write them) POSTed the same way
//   import:         `meridian import` of the same rows as CSV (iso), .arrow and .parquet,
//                   and DuckDB's read_csv of the same CSV into a table, in the same run
// A body is at most 64 MiB (the uploads' max_body_bytes, kept for columnar bodies: a
// request's body is held whole while it is decoded), so an upload is BENCH_COLUMNAR_CHUNK
// rows (1M: 16 MB of Arrow) a request, sent one after another to the same series (appends,
// D67); the figure is rows / time from the first request to the last answer. The bodies
// are made before the clock starts. Each case BENCH_ROUNDS times (3), a fresh series each
// time; median, lowest and highest. SQLite file database, synchronous=FULL.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync, createWriteStream } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { once } from "node:events";
import { Agent, request } from "undici";
import { Table, makeData, makeVector, tableFromIPC, tableToIPC, Timestamp, TimeUnit } from "apache-arrow";
import { Table as WasmTable, writeParquet, WriterPropertiesBuilder, Compression } from "parquet-wasm";
import { DuckDBInstance } from "@duckdb/node-api";
import { reporter, spread } from "../report.js";
import { startMeridian } from "../server.js";
import { openBackend } from "../../dist/app/backend.js";
import { loadSettings } from "../../dist/config/settings.js";
import { columnChunks, text, W1_FIELDS } from "../w1.js";

const ROWS = Number(process.env.BENCH_COLUMNAR_ROWS ?? 10_000_000);
const CHUNK = Number(process.env.BENCH_COLUMNAR_CHUNK ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PROJECT = "bench";
const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const emit = reporter("ingest-columnar");
const dir = mkdtempSync(join(tmpdir(), "meridian-bench-columnar-"));
const dbPath = join(dir, "m.db");

const b = await openBackend(loadSettings({ MERIDIAN_DB: dbPath }), "file-and-folder");
const { key } = await b.apiKeys.create({ clientId: "bench", roles: [], scopes: ["platform_timeseries_readwrite"], projects: [PROJECT] });
await b.close();
const server = await startMeridian(dbPath);
const agent = new Agent({ connections: 4, keepAliveTimeout: 30_000, bodyTimeout: 0, headersTimeout: 0 });
const headers = { "svc-open-api-key": key, "svc-service-id": "timeseries", "svc-project-id": PROJECT };

async function call(method, path, body, type = "application/json", extra = {}) {
  const r = await request(server.address + path, {
    method,
    dispatcher: agent,
    headers: { ...headers, "content-type": type, ...extra },
    body: body === undefined ? undefined : type === "application/json" ? JSON.stringify(body) : body,
  });
  const t = await r.body.text();
  if (r.statusCode >= 300) throw new Error(`${method} ${path}: ${r.statusCode} ${t.slice(0, 500)}`);
  return t ? JSON.parse(t) : undefined;
}

const dataset = (await call("POST", "/api/ts/dataset", {})).id;
const dh = { "svc-dataset-id": dataset };
const newSeries = async () =>
  (await call("POST", `/api/ts/dataset/${dataset}/timeseries`, { item: { name: "w1" }, dataFields: W1_FIELDS }, "application/json", dh)).id;

// ---- the bodies ------------------------------------------------------------
process.stderr.write(`making ${ROWS} W1 rows as Arrow and Parquet bodies of ${CHUNK} rows\n`);
const arrowBodies = [];
const parquetBodies = [];
const zstd = new WriterPropertiesBuilder().setCompression(Compression.ZSTD).build();
for (const { timestamps, values, flags } of columnChunks(ROWS, CHUNK)) {
  const ms = BigInt64Array.from(timestamps, (t) => BigInt(t) * 1000n);
  const ipc = tableToIPC(
    new Table({
      timestamp: makeVector(makeData({ type: new Timestamp(TimeUnit.MILLISECOND, "UTC"), length: ms.length, data: ms })),
      value: makeVector(values),
      flag: makeVector(flags),
    }),
    "stream",
  );
  arrowBodies.push(ipc);
  parquetBodies.push(writeParquet(WasmTable.fromIPCStream(ipc), zstd));
}
const mb = (bodies) => (bodies.reduce((n, x) => n + x.length, 0) / 1e6).toFixed(0);
process.stderr.write(`Arrow ${mb(arrowBodies)} MB, Parquet ${mb(parquetBodies)} MB\n`);

async function upload(type, bodies) {
  const s = await newSeries();
  const path = `/api/ts/dataset/${dataset}/timeseries/${s}/values`;
  const t0 = performance.now();
  let count = 0;
  for (const body of bodies) count += (await call("POST", path, body, type, dh)).count;
  const seconds = (performance.now() - t0) / 1000;
  if (count !== ROWS) throw new Error(`stored ${count} rows of ${ROWS}`);
  return ROWS / seconds;
}

for (const { name, type, bodies } of [
  { name: "arrow upload", type: "application/vnd.apache.arrow.stream", bodies: arrowBodies },
  { name: "parquet upload", type: "application/vnd.apache.parquet", bodies: parquetBodies },
]) {
  const rates = [];
  for (let r = 0; r < ROUNDS; r++) {
    rates.push(await upload(type, bodies));
    process.stderr.write(`${name}: ${(rates.at(-1) / 1e6).toFixed(2)}M rows/s\n`);
  }
  emit(`${name} ${ROWS / 1e6}M W1 rows, ${CHUNK} rows a request`, "throughput", spread(rates), "rows/s");
}

// ---- imports ---------------------------------------------------------------
const csv = join(dir, "w1.csv");
const out = createWriteStream(csv);
for (const chunk of text(ROWS, "iso")) if (!out.write(chunk)) await once(out, "drain");
out.end();
await once(out, "finish");
// One stream and one file of every row (as a read of the whole series answers them).
const all = tableFromIPC(arrowBodies[0]).concat(...arrowBodies.slice(1).map((x) => tableFromIPC(x)));
const arrowFile = join(dir, "w1.arrow");
const allIpc = tableToIPC(all, "stream");
writeFileSync(arrowFile, allIpc);
const parquetFile = join(dir, "w1.parquet");
writeFileSync(parquetFile, writeParquet(WasmTable.fromIPCStream(allIpc), zstd));

function meridianImport(file) {
  return async () => {
    const s = await newSeries();
    const t0 = performance.now();
    const r = spawnSync(process.execPath, [join(root, "bin", "meridian.js"), "import", "--dataset", dataset, "--series", s, file], {
      env: { ...process.env, MERIDIAN_DB: dbPath },
      encoding: "utf8",
    });
    if (r.status !== 0) throw new Error(`import ${file}: ${r.stderr}`);
    if (!r.stdout.includes(`${ROWS} rows read, ${ROWS} stored`)) throw new Error(`import ${file}: ${r.stdout}`);
    return (performance.now() - t0) / 1000;
  };
}

const duck = await (await DuckDBInstance.create(join(dir, "duck.db"))).connect();
async function duckdbReadCsv() {
  await duck.run("DROP TABLE IF EXISTS w1");
  const t0 = performance.now();
  await duck.run(
    `CREATE TABLE w1 AS SELECT * FROM read_csv('${csv}', header = false, columns = {'timestamp': 'TIMESTAMP', 'value': 'FLOAT', 'flag': 'INTEGER'})`,
  );
  return (performance.now() - t0) / 1000;
}

const cases = [
  { name: "meridian import csv", run: meridianImport(csv) },
  { name: "meridian import arrow", run: meridianImport(arrowFile) },
  { name: "meridian import parquet", run: meridianImport(parquetFile) },
  { name: "duckdb read_csv", run: duckdbReadCsv },
];
/** @type {Map<string, number[]>} */
const times = new Map(cases.map(({ name }) => [name, []]));
for (let r = 0; r < ROUNDS; r++) {
  for (const { name, run } of cases) {
    const seconds = await run();
    times.get(name).push(seconds);
    process.stderr.write(`${name}: ${seconds.toFixed(2)} s\n`);
  }
}
const duckMedian = spread(times.get("duckdb read_csv")).median;
for (const { name } of cases)
  emit(`${name} ${ROWS / 1e6}M W1 rows`, "time", spread(times.get(name)), "s", name.startsWith("duckdb") ? undefined : duckMedian);

duck.closeSync();
server.process.kill();
await once(server.process, "exit");
rmSync(dir, { recursive: true, force: true });
process.exit(0);
