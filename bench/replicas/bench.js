#!/usr/bin/env node
// Message listings from replicas on one PostgreSQL database (issue 15, D40),
// against one Meridian on SQLite in the same run (the baseline): the data of
// bench/messages (10,000 messages over 100 features), the feature listing
// under autocannon (32 connections) for BENCH_SECONDS (10) per case:
//   SQLite, one process            (baseline)
//   PostgreSQL, one replica
//   PostgreSQL, two replicas       (16 connections each, at once; summed)
// and each replica's RSS after its load. Needs a PostgreSQL server:
// BENCH_PG or MERIDIAN_TEST_PG (scripts/with-postgres.sh npm run bench -- replicas).
// Under scripts/with-patroni.sh it measures reads from standbys instead (standbys.js).
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import { openDatabase } from "../../dist/sqlite/database.js";
import { SqliteApiKeyStore } from "../../dist/sqlite/api-key-store.js";
import { newKey } from "../../dist/auth/api-keys.js";
import { SqliteMessageStore } from "../../dist/sqlite/message-store.js";
import { migratePostgres } from "../../dist/postgres/schema.js";
import { reporter } from "../report.js";
import { startMeridian } from "../server.js";

// Under scripts/with-patroni.sh: the reads from standbys against the primary alone (standbys.js).
if (process.env.PATRONI_URLS) {
  await import("./standbys.js");
  process.exit(0);
}
const PG = process.env.BENCH_PG || process.env.MERIDIAN_TEST_PG;
if (!PG) {
  process.stderr.write("bench/replicas skipped: no PostgreSQL (set BENCH_PG, or run scripts/with-postgres.sh npm run bench -- replicas)\n");
  process.exit(0);
}
const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const PATH = "/api/admin/feature/feature-42/message";
const GRANT = { clientId: "bench", roles: ["BackOffice"], scopes: ["platform_iam_featurestatus_read"], projects: [] };
const emit = reporter("replicas");

// The messages of bench/messages: a third pending, a third active, a third expired.
const now = Math.floor(Date.now() / 1000);
const window = (i) =>
  [
    [now + 3600, now + 7200],
    [now - 3600, now + 3600],
    [now - 7200, now - 3600],
  ][i % 3];
const messages = [];
for (let f = 0; f < 100; f++) {
  for (let i = 0; i < 99; i++) {
    const [s, e] = window(i);
    messages.push({
      feature_id: `feature-${f}`,
      type: "Warning",
      title: `Notice ${f}/${i}`,
      body: "<p>Planned <b>maintenance</b> of the service.</p>",
      start_date: s - i,
      expiring_date: e + i,
    });
  }
}
for (let i = 0; i < 100; i++) {
  const [s, e] = window(i);
  messages.push({ feature_id: null, type: "Informational", title: `Global ${i}`, body: "", start_date: s - i, expiring_date: e + i });
}

const dir = mkdtempSync(join(tmpdir(), "meridian-bench-replicas-"));
const dbName = `meridian_bench_${process.pid}`;
const admin = postgres(PG, { max: 1, onnotice: () => {} });
const procs = [];
try {
  // SQLite file.
  const file = join(dir, "m.db");
  const db = openDatabase(file);
  const store = new SqliteMessageStore(db);
  db.transaction(() => messages.forEach((m) => void store.insert(m)))();
  const sqliteKey = new SqliteApiKeyStore(db).createNow(GRANT).key;
  db.close();
  // PostgreSQL database.
  await admin.unsafe(`CREATE DATABASE ${dbName}`);
  const url = new URL(PG);
  url.pathname = `/${dbName}`;
  const sql = postgres(url.toString(), { max: 2, onnotice: () => {} });
  await migratePostgres(sql);
  for (let i = 0; i < messages.length; i += 1000) await sql`INSERT INTO messages ${sql(messages.slice(i, i + 1000))}`;
  const { row, key: pgKey } = newKey(GRANT);
  await sql`INSERT INTO api_keys ${sql(row)}`;
  await sql.end();

  const start = async (target) => {
    const s = await startMeridian(target);
    procs.push(s.process);
    const r = await fetch(s.address + PATH, { headers: { "svc-open-api-key": target === file ? sqliteKey : pgKey } });
    if (r.status !== 200 || (await r.json()).data.length === 0) throw new Error(`${target}: listing answered ${r.status}`);
    return s;
  };
  const load = (address, key, connections) =>
    new Promise((resolve, reject) => {
      const args = [
        join(root, "node_modules", "autocannon", "autocannon.js"),
        "-j",
        "-c",
        String(connections),
        "-d",
        String(SECONDS),
        "-H",
        `svc-open-api-key=${key}`,
        address + PATH,
      ];
      const p = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "ignore"] });
      let out = "";
      p.stdout.on("data", (d) => (out += d));
      p.once("exit", (code) => {
        if (code !== 0) return reject(new Error(`autocannon exited ${code}`));
        const r = JSON.parse(out);
        if (r.errors + r.non2xx > 0) return reject(new Error(`${r.errors + r.non2xx} errors or non-2xx`));
        resolve({ rps: r.requests.average, p99: r.latency.p99 });
      });
    });
  const rssMb = (p) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p.pid}/status`, "utf8"))[1]) / 1024;

  const lite = await start(file);
  await load(lite.address, sqliteKey, 32); // warm-up
  const base = await load(lite.address, sqliteKey, 32);
  emit("feature listing, SQLite, one process (baseline)", "req/s", base.rps, "req/s");
  emit("feature listing, SQLite, one process (baseline)", "RSS", rssMb(lite.process), "MB");
  lite.process.kill("SIGTERM");

  const [a, b] = [await start(url.toString()), await start(url.toString())];
  await load(a.address, pgKey, 32); // warm-up
  const one = await load(a.address, pgKey, 32);
  emit("feature listing, PostgreSQL, one replica", "req/s", one.rps, "req/s", base.rps);
  emit("feature listing, PostgreSQL, one replica", "p99", one.p99, "ms");
  const [ra, rb] = await Promise.all([load(a.address, pgKey, 16), load(b.address, pgKey, 16)]);
  emit("feature listing, PostgreSQL, two replicas (summed)", "req/s", ra.rps + rb.rps, "req/s", base.rps);
  emit("feature listing, PostgreSQL, two replicas", "p99", Math.max(ra.p99, rb.p99), "ms");
  emit("PostgreSQL replica memory after its load", "RSS", (rssMb(a.process) + rssMb(b.process)) / 2, "MB");
} finally {
  for (const p of procs) if (p.exitCode === null) p.kill("SIGTERM");
  await Promise.all(procs.filter((p) => p.exitCode === null).map((p) => new Promise((r) => p.once("exit", r))));
  await admin.unsafe(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => {});
  await admin.end();
  rmSync(dir, { recursive: true, force: true });
}
