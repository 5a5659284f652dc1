#!/usr/bin/env node
// Reads from standbys (issue 42, D71): two Meridian replicas on a Patroni
// cluster (scripts/with-patroni.sh), reading
//   from the primary alone   (MERIDIAN_DB only: the baseline), then
//   from the standbys        (MERIDIAN_DB_READ, target_session_attrs=prefer-standby),
// in the same run, each case for BENCH_SECONDS (8), in turns (BENCH_ROUNDS, 2):
//   a feature listing (of 10,000 messages over 100 features), a 1M-row W1 values read as JSON
//   and as Arrow, and a chart of it 1,600 pixels wide; CONCURRENCY callers per replica.
// Prints requests per second summed over both replicas, and the ratio standbys / primary.
// The replicas keep no listing or block cache (MERIDIAN_LISTING_CACHE_MB=0, MERIDIAN_BLOCK_CACHE_MB=0):
// with them, repeated reads are answered from memory and would measure the caches, not the standbys.
// On one 2-core machine the replicas, the three PostgreSQL nodes and the callers share the
// same cores: the ratio says what moving reads off the primary costs or saves here, not on
// a cluster of machines.
//   scripts/with-patroni.sh node bench/replicas/standbys.js
import { Agent, request } from "undici";
import postgres from "postgres";
import { reporter, spread } from "../report.js";
import { startMeridian } from "../server.js";
import { openBackend } from "../../dist/app/backend.js";
import { loadSettings } from "../../dist/config/settings.js";
import { W1_FIELDS, rows } from "../w1.js";

const WRITE = process.env.MERIDIAN_DB;
const READ = process.env.MERIDIAN_DB_READ;
if (!WRITE || !READ || !process.env.PATRONI_URLS) {
  process.stderr.write(
    "bench/replicas/standbys skipped: no Patroni cluster (run it as scripts/with-patroni.sh node bench/replicas/standbys.js)\n",
  );
  process.exit(0);
}
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
const ROWS = 1_000_000;
const PROJECT = "bench";
const emit = reporter("replicas-standbys");

// ---- data: messages, a 1M-row series, one key that reads both ---------------
const backend = await openBackend(loadSettings({ MERIDIAN_DB: WRITE }), "file-and-folder");
const { key } = await backend.apiKeys.create({
  clientId: "bench",
  roles: ["BackOffice"],
  scopes: ["platform_iam_featurestatus_read", "platform_timeseries_readwrite"],
  projects: [PROJECT],
});
await backend.close();
const sql = postgres(WRITE, { max: 1, onnotice: () => {}, target_session_attrs: "primary" });
const now = Math.floor(Date.now() / 1000);
const messages = [];
for (let f = 0; f < 100; f++) {
  for (let i = 0; i < 100; i++) {
    messages.push({
      feature_id: `feature-${f}`,
      type: "Warning",
      title: `Notice ${f}/${i}`,
      body: "<p>Planned <b>maintenance</b> of the service.</p>",
      start_date: now - 3600 - i,
      expiring_date: now + 3600 + i,
    });
  }
}
for (let i = 0; i < messages.length; i += 1000) await sql`INSERT INTO messages ${sql(messages.slice(i, i + 1000))}`;

const agent = new Agent({ connections: 64, keepAliveTimeout: 30_000 });
const headers = { "svc-open-api-key": key, "svc-service-id": "timeseries", "svc-project-id": PROJECT };
async function call(base, method, path, body, extra = {}) {
  const r = await request(base + path, {
    method,
    dispatcher: agent,
    headers: { "content-type": "application/json", ...headers, ...extra },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const bytes = Buffer.from(await r.body.arrayBuffer());
  if (r.statusCode >= 300) throw new Error(`${method} ${path}: ${r.statusCode} ${bytes.toString().slice(0, 300)}`);
  return bytes;
}

const writer = await startMeridian(WRITE, { MERIDIAN_DB_READ: "" });
// A failure below must not leave a server behind retrying a cluster that with-patroni.sh removes.
process.once("exit", () => writer.process.exitCode === null && writer.process.kill("SIGKILL"));
const dataset = JSON.parse(await call(writer.address, "POST", "/api/ts/dataset", {})).id;
headers["svc-dataset-id"] = dataset;
const series = JSON.parse(
  await call(writer.address, "POST", `/api/ts/dataset/${dataset}/timeseries`, { item: { name: "W1" }, dataFields: W1_FIELDS }),
).id;
const values = `/api/ts/dataset/${dataset}/timeseries/${series}/values`;
let batch = [];
for (const [t, v, f] of rows(ROWS)) {
  batch.push([new Date(t * 1000).toISOString().slice(0, 19), Number(v), f]);
  if (batch.length === 100_000) {
    await call(writer.address, "POST", values, { data: batch });
    batch = [];
  }
}
writer.process.kill("SIGTERM");
await new Promise((r) => writer.process.once("exit", r));
// Until every standby has replayed the data (else the first reads would wait for it, D71).
const lsn = (await sql`SELECT pg_current_wal_lsn() AS lsn`)[0].lsn;
const readers = postgres(READ, { max: 1, onnotice: () => {}, target_session_attrs: "standby" });
for (let i = 0; i < 100; i++) {
  const [{ caught }] = await readers`SELECT pg_last_wal_replay_lsn() >= ${lsn}::pg_lsn AS caught`;
  if (caught) break;
  await new Promise((r) => setTimeout(r, 100));
}
await readers.end();
await sql.end();

const cases = [
  { name: "feature listing", path: "/api/admin/feature/feature-42/message", accept: "application/json" },
  { name: "1M-row values read, JSON", path: values, accept: "application/json" },
  { name: "1M-row values read, Arrow", path: values, accept: "application/vnd.apache.arrow.stream" },
  { name: "chart of 1M rows, 1,600 px", path: `${values}/chart?width=1600`, accept: "application/json" },
];

/** Requests answered per second by `bases` together, CONCURRENCY callers each, for SECONDS. */
async function rate(bases, c) {
  let done = 0;
  const until = performance.now() + SECONDS * 1000;
  await Promise.all(
    bases.flatMap((base) =>
      Array.from({ length: CONCURRENCY }, async () => {
        while (performance.now() < until) {
          await call(base, "GET", c.path, undefined, { accept: c.accept });
          done++;
        }
      }),
    ),
  );
  return done / SECONDS;
}

const NO_CACHES = { MERIDIAN_LISTING_CACHE_MB: "0", MERIDIAN_BLOCK_CACHE_MB: "0" };
const setups = [
  { name: "primary alone", env: { ...NO_CACHES, MERIDIAN_DB_READ: "" } },
  { name: "standbys", env: { ...NO_CACHES, MERIDIAN_DB_READ: READ } },
];
const figures = new Map(); // setup -> case -> [req/s]
try {
  for (let round = 0; round < ROUNDS; round++) {
    for (const setup of setups) {
      const replicas = [await startMeridian(WRITE, setup.env), await startMeridian(WRITE, setup.env)];
      try {
        const bases = replicas.map((r) => r.address);
        for (const c of cases) {
          await rate(bases, { ...c, seconds: 1 }); // warm-up (caches, plans, connections)
          const r = await rate(bases, c);
          const byCase = figures.get(setup.name) ?? new Map();
          byCase.set(c.name, [...(byCase.get(c.name) ?? []), r]);
          figures.set(setup.name, byCase);
        }
      } finally {
        for (const r of replicas) r.process.kill("SIGTERM");
        await Promise.all(replicas.map((r) => new Promise((z) => (r.process.exitCode === null ? r.process.once("exit", z) : z()))));
      }
    }
  }
} finally {
  await agent.close();
}
for (const c of cases) {
  const primary = spread(figures.get("primary alone").get(c.name));
  const standby = spread(figures.get("standbys").get(c.name));
  emit(`${c.name}, two replicas reading from the primary alone (baseline)`, "req/s", primary, "req/s");
  emit(`${c.name}, two replicas reading from the standbys`, "req/s", standby, "req/s", primary.median);
}
