#!/usr/bin/env node
// Ingest (issue 41, D66-D68): live appends as a collector sends them, in
// turns with InfluxDB 1.6 (Debian's `influxdb`, line protocol), both
// acknowledging a write only once it is fsynced (Meridian: SQLite
// synchronous=FULL, or PostgreSQL's commit; InfluxDB: wal-fsync-delay 0s).
//
// Cases (each ROUNDS times, Meridian and InfluxDB in turns, DURATION_MS each; BENCH_CASES=2,3 picks):
//   floor:              an authenticated GET of a dataset's metadata (a request's cost without a write)
//   1 row a request:    SERIES series, WRITERS concurrent writers, each request the next row of one series
//   100 rows a request: the same with 100 consecutive rows a request
//   many series:        1,000 series x 1 row in one request (D68), 4 writers; InfluxDB: 1,000 lines a request
// Every acknowledged row is read back from Meridian at the end (counted).
// BENCH_INGEST_DB=postgres://... measures Meridian on PostgreSQL instead of a SQLite file;
// BENCH_INFLUX=0 leaves InfluxDB out (a profile of Meridian alone: BENCH_SERVER_ARGS=--cpu-prof).
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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
    rows: requests * rowsPerRequest,
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

/** Server CPU seconds so far (user + system), from /proc: a figure that holds on a busy machine, unlike wall time. */
function serverCpuS() {
  const f = readFileSync(`/proc/${server.process.pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(f[11]) + Number(f[12])) / 100;
}

/** Rows per request of one series, round robin over SERIES series. */
async function meridianAppends(k) {
  const { dataset, ids, h } = await newDataset(SERIES);
  const acked = new Map();
  const pick = appender(k);
  const cpu0 = serverCpuS();
  const result = await load(WRITERS, k, async (_w, i) => {
    const { s, t } = pick(i);
    const data = Array.from({ length: k }, (_, j) => [iso(t + j * 60), (i + j) % 97, j % 3]);
    await call("POST", `/api/ts/dataset/${dataset}/timeseries/${ids[s]}/values`, { data }, h);
    acked.set(ids[s], (acked.get(ids[s]) ?? 0) + k);
  });
  const cpu = serverCpuS() - cpu0;
  return { ...result, cpuUsPerRow: (cpu * 1e6) / result.rows, missing: await missingRows(dataset, h, acked) };
}

/** The floor of a request: an authenticated read of the dataset's metadata, as many writers (no write). */
async function meridianFloor() {
  const { dataset, h } = await newDataset(1);
  const cpu0 = serverCpuS();
  const result = await load(WRITERS, 1, () => call("GET", `/api/ts/dataset/${dataset}`, undefined, h));
  const cpu = serverCpuS() - cpu0;
  return { ...result, cpuUsPerRow: (cpu * 1e6) / result.rows, missing: 0 };
}

/** D68: one row for each of `series` series a request (the next row of each), `writers` writers. */
async function meridianMany(series, writers) {
  const { dataset, ids, h } = await newDataset(series);
  let tick = 0;
  const cpu0 = serverCpuS();
  const result = await load(writers, series, async () => {
    const t = 946684800 + 60 * tick++;
    const body = { series: ids.map((id, j) => ({ timeSeriesId: id, data: [[iso(t), j % 97, 0]] })) };
    await call("POST", `/api/ts/dataset/${dataset}/values`, body, h);
  });
  const cpu = serverCpuS() - cpu0;
  const acked = new Map(ids.map((id) => [id, tick]));
  return { ...result, cpuUsPerRow: (cpu * 1e6) / result.rows, missing: await missingRows(dataset, h, acked) };
}

/** Acknowledged rows not read back: each series must hold at least the rows acknowledged to it. */
async function missingRows(dataset, h, acked) {
  let missing = 0;
  for (const [id, n] of acked) {
    const body = await call("GET", `/api/ts/dataset/${dataset}/timeseries/${id}/values`, undefined, h);
    missing += Math.max(0, n - body.data.length);
  }
  return missing;
}

async function influxAppends(url, k) {
  const pick = appender(k);
  return load(WRITERS, k, async (_w, i) => {
    const { s, t } = pick(i);
    let body = "";
    for (let j = 0; j < k; j++) body += `w1,series=s${s} value=${(i + j) % 97},flag=${j % 3}i ${t + j * 60}\n`;
    await influxWrite(url, body);
  });
}

async function influxMany(url, series, writers) {
  let tick = 0;
  return load(writers, series, async () => {
    const t = 946684800 + 60 * tick++;
    let body = "";
    for (let j = 0; j < series; j++) body += `w1,series=s${j} value=${j % 97},flag=0i ${t}\n`;
    await influxWrite(url, body);
  });
}

const influxOk = process.env.BENCH_INFLUX !== "0" && spawnSync("influxd", ["version"]).status === 0;
if (!influxOk) process.stderr.write("influxd not found (apt-get install influxdb), or BENCH_INFLUX=0: Meridian's figures only\n");

const CASES = [
  { name: `floor: GET a dataset x ${WRITERS} clients (a request, no write)`, meridian: meridianFloor },
  {
    name: `${SERIES} series x 1 row a request x ${WRITERS} writers`,
    meridian: () => meridianAppends(1),
    influx: (u) => influxAppends(u, 1),
  },
  {
    name: `${SERIES} series x 100 rows a request x ${WRITERS} writers`,
    meridian: () => meridianAppends(100),
    influx: (u) => influxAppends(u, 100),
  },
  { name: "1,000 series x 1 row in one request x 4 writers", meridian: () => meridianMany(1000, 4), influx: (u) => influxMany(u, 1000, 4) },
];
const only = process.env.BENCH_CASES?.split(",").map(Number);
for (const [n, c] of CASES.entries()) {
  if (only && !only.includes(n + 1)) continue;
  const name = `${c.name} (${backend})`;
  const m = [];
  const i = [];
  for (let round = 0; round < ROUNDS; round++) {
    m.push(await c.meridian());
    if (influxOk && c.influx) {
      const influx = await startInflux();
      i.push(await c.influx(influx.url));
      await influx.stop();
    }
  }
  const im = (f) => (influxOk ? spread(i.map(f)).median : undefined);
  emit(
    name,
    "Meridian rows/s",
    spread(m.map((r) => r.rate)),
    "rows/s",
    im((r) => r.rate),
  );
  if (influxOk) emit(name, "InfluxDB 1.6 rows/s", spread(i.map((r) => r.rate)), "rows/s");
  emit(
    name,
    "Meridian p50",
    spread(m.map((r) => r.p50)),
    "ms",
    im((r) => r.p50),
  );
  emit(
    name,
    "Meridian p99",
    spread(m.map((r) => r.p99)),
    "ms",
    im((r) => r.p99),
  );
  emit(name, "Meridian server CPU a row", spread(m.map((r) => r.cpuUsPerRow)), "us");
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
