#!/usr/bin/env node
// Ingest (issue 41, D66-D68): live appends as a collector sends them, in
// turns with InfluxDB 1.6 (Debian's `influxdb`, line protocol), both
// acknowledging a write only once it is fsynced (Meridian: SQLite
// synchronous=FULL, or PostgreSQL's commit; InfluxDB: wal-fsync-delay 0s).
//
// Cases (each ROUNDS times, Meridian and InfluxDB in turns, DURATION_MS each):
//   1 row a request:    SERIES series, WRITERS concurrent writers, each request the next row of one series
//   100 rows a request: the same with 100 consecutive rows a request
//   many series:        1,000 series x 1 row in one request (D68), 4 writers; InfluxDB: 1,000 lines a request
// Every acknowledged row is read back from Meridian at the end (counted).
// BENCH_INGEST_DB=postgres://... measures Meridian on PostgreSQL instead of a SQLite file;
// BENCH_INFLUX=0 leaves InfluxDB out (a profile of Meridian alone: BENCH_SERVER_ARGS=--cpu-prof).
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, request } from "undici";
import { reporter, spread } from "../report.js";
import { startMeridian } from "../server.js";
import { openBackend } from "../../dist/app/backend.js";
import { loadSettings } from "../../dist/config/settings.js";
import { W1_FIELDS } from "../w1.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 4000);
const SERIES = 100;
const WRITERS = 8;
const PROJECT = "bench";
const emit = reporter("ingest");
const dir = mkdtempSync(join(tmpdir(), "meridian-bench-ingest-"));
const pgUrl = process.env.BENCH_INGEST_DB;
const backend = pgUrl ? "postgres" : "sqlite";

// ---- Meridian ------------------------------------------------------------
const dbPath = pgUrl ?? join(dir, "m.db");
const backendOpen = await openBackend(loadSettings({ MERIDIAN_DB: dbPath }), "file-and-folder");
const { key } = await backendOpen.apiKeys.create({
  clientId: "bench",
  roles: [],
  scopes: ["platform_timeseries_readwrite"],
  projects: [PROJECT],
});
await backendOpen.close();
const server = await startMeridian(dbPath);
const base = server.address;
const agent = new Agent({ connections: 64, pipelining: 1, keepAliveTimeout: 30_000 });

async function call(method, path, body, extra = {}) {
  const r = await request(base + path, {
    method,
    dispatcher: agent,
    headers: {
      "content-type": "application/json",
      "svc-open-api-key": key,
      "svc-service-id": "timeseries",
      "svc-project-id": PROJECT,
      ...extra,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.body.text();
  if (r.statusCode >= 300) throw new Error(`${method} ${path}: ${r.statusCode} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

async function newDataset(series) {
  const d = await call("POST", "/api/ts/dataset", {});
  const h = { "svc-dataset-id": d.id };
  const ids = [];
  for (let i = 0; i < series; i++) {
    const s = await call("POST", `/api/ts/dataset/${d.id}/timeseries`, { item: { name: `s${i}` }, dataFields: W1_FIELDS }, h);
    ids.push(s.id);
  }
  return { dataset: d.id, ids, h };
}

const iso = (t) => new Date(t * 1000).toISOString().slice(0, 19);

// ---- InfluxDB 1.6 -----------------------------------------------------------
async function startInflux() {
  const idir = join(dir, `influx-${Date.now()}`);
  const port = 18086 + Math.floor(Math.random() * 1000);
  const conf = join(idir + ".conf");
  writeFileSync(
    conf,
    `reporting-disabled = true
bind-address = "127.0.0.1:${port + 1}"
[meta]
  dir = "${idir}/meta"
[data]
  dir = "${idir}/data"
  wal-dir = "${idir}/wal"
  wal-fsync-delay = "0s"
  query-log-enabled = false
[http]
  bind-address = "127.0.0.1:${port}"
  log-enabled = false
[monitor]
  store-enabled = false
`,
  );
  const p = spawn("influxd", ["-config", conf], { stdio: "ignore" });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    try {
      const r = await fetch(`${url}/ping`);
      if (r.status === 204) break;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  await fetch(`${url}/query?q=CREATE%20DATABASE%20bench`, { method: "POST" });
  return {
    url,
    stop: () =>
      new Promise((resolve) => {
        p.once("exit", resolve);
        p.kill("SIGTERM");
      }),
  };
}

async function influxWrite(url, lines) {
  const r = await request(`${url}/write?db=bench&precision=s`, { method: "POST", dispatcher: agent, body: lines });
  await r.body.text();
  if (r.statusCode !== 204) throw new Error(`influx write: ${r.statusCode}`);
}

// ---- the load -------------------------------------------------------------
/** Runs `writers` loops of `send(w, i)` for DURATION_MS; returns rows/s and each request's latency. */
async function load(writers, rowsPerRequest, send) {
  const latencies = [];
  let requests = 0;
  const end = performance.now() + DURATION_MS;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      while (performance.now() < end) {
        const t0 = performance.now();
        await send(w, requests++);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    rate: (requests * rowsPerRequest) / seconds,
    p50: latencies[latencies.length >> 1],
    p99: latencies[Math.floor(latencies.length * 0.99)],
  };
}

/** The appends of one case: each request the next `k` rows of one series, round robin. */
function appender(k) {
  const next = new Float64Array(SERIES).fill(946684800);
  return (i) => {
    const s = i % SERIES;
    const t = next[s];
    next[s] += k * 60;
    return { s, t };
  };
}

async function meridianCase(k) {
  const { dataset, ids, h } = await newDataset(SERIES);
  const acked = new Map();
  const pick = appender(k);
  const result = await load(WRITERS, k, async (_w, i) => {
    const { s, t } = pick(i);
    const data = Array.from({ length: k }, (_, j) => [iso(t + j * 60), (i + j) % 97, j % 3]);
    await call("POST", `/api/ts/dataset/${dataset}/timeseries/${ids[s]}/values`, { data }, h);
    acked.set(ids[s], (acked.get(ids[s]) ?? 0) + k);
  });
  // Every acknowledged row is there: each series holds at least the rows acknowledged to it.
  let missing = 0;
  for (const [id, n] of acked) {
    const body = await call("GET", `/api/ts/dataset/${dataset}/timeseries/${id}/values`, undefined, h);
    missing += Math.max(0, n - body.data.length);
  }
  return { ...result, missing };
}

async function influxCase(url, k) {
  const pick = appender(k);
  return load(WRITERS, k, async (_w, i) => {
    const { s, t } = pick(i);
    let body = "";
    for (let j = 0; j < k; j++) body += `w1,series=s${s} value=${(i + j) % 97},flag=${j % 3}i ${t + j * 60}\n`;
    await influxWrite(url, body);
  });
}

const influxOk = process.env.BENCH_INFLUX !== "0" && spawnSync("influxd", ["version"]).status === 0;
if (!influxOk) process.stderr.write("influxd not found (apt-get install influxdb): Meridian's figures only\n");

for (const k of [1, 100]) {
  const name = `${SERIES} series x ${k} row${k > 1 ? "s" : ""} a request x ${WRITERS} writers (${backend})`;
  const m = [];
  const i = [];
  for (let round = 0; round < ROUNDS; round++) {
    m.push(await meridianCase(k));
    if (influxOk) {
      const influx = await startInflux();
      i.push(await influxCase(influx.url, k));
      await influx.stop();
    }
  }
  const im = influxOk ? spread(i.map((r) => r.rate)).median : undefined;
  emit(name, "Meridian rows/s", spread(m.map((r) => r.rate)), "rows/s", im);
  if (influxOk) emit(name, "InfluxDB 1.6 rows/s", spread(i.map((r) => r.rate)), "rows/s");
  emit(name, "Meridian p50", spread(m.map((r) => r.p50)), "ms", influxOk ? spread(i.map((r) => r.p50)).median : undefined);
  emit(name, "Meridian p99", spread(m.map((r) => r.p99)), "ms", influxOk ? spread(i.map((r) => r.p99)).median : undefined);
  emit(
    name,
    "acknowledged rows missing",
    m.reduce((a, r) => a + r.missing, 0),
    "rows",
  );
}

await agent.close();
await new Promise((resolve) => {
  server.process.once("exit", resolve);
  server.process.kill("SIGTERM");
});
rmSync(dir, { recursive: true, force: true });
