#!/usr/bin/env node
// Message listings under load (issue 3): 10,000 messages over 100 features,
// the server in its own process, autocannon in another for 10 s per case.
// Baseline, same run, same server: GET /healthz (transport floor, no
// auth, no database). Prints JSON rows for bench/run.js.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { openDatabase } from "../../dist/sqlite/database.js";
import { SqliteApiKeyStore } from "../../dist/sqlite/api-key-store.js";
import { SqliteMessageStore } from "../../dist/sqlite/message-store.js";
import { reporter } from "../report.js";
import { startMeridian } from "../server.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);

const dir = mkdtempSync(join(tmpdir(), "meridian-bench-"));
const dbPath = join(dir, "m.db");

// Seed: 99 messages for each of 100 features plus 100 global ones; a third
// pending, a third active, a third expired.
const db = openDatabase(dbPath);
const store = new SqliteMessageStore(db);
const now = Math.floor(Date.now() / 1000);
const window = (i) =>
  [
    [now + 3600, now + 7200],
    [now - 3600, now + 3600],
    [now - 7200, now - 3600],
  ][i % 3];
db.transaction(() => {
  for (let f = 0; f < 100; f++) {
    for (let i = 0; i < 99; i++) {
      const [s, e] = window(i);
      void store.insert({
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
    void store.insert({ feature_id: null, type: "Informational", title: `Global ${i}`, body: "", start_date: s - i, expiring_date: e + i });
  }
})();
const key = new SqliteApiKeyStore(db).createNow({
  clientId: "bench",
  roles: ["BackOffice"],
  scopes: ["platform_iam_featurestatus_read"],
  projects: [],
}).key;
db.close();

// BENCH_SERVER_ARGS="--cpu-prof" profiles the server under load.
const { process: server, address: url } = await startMeridian(dbPath);

function load(path) {
  return new Promise((resolve, reject) => {
    const args = [
      join(root, "node_modules", "autocannon", "autocannon.js"),
      "-j",
      "-c",
      String(CONNECTIONS),
      "-d",
      String(SECONDS),
      "-H",
      `svc-open-api-key=${key}`,
      url + path,
    ];
    const p = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "ignore"] });
    let out = "";
    p.stdout.on("data", (d) => (out += d));
    p.once("exit", (code) => {
      if (code !== 0) return reject(new Error(`autocannon exited ${code}`));
      const r = JSON.parse(out);
      resolve({ rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.non2xx, total: r.requests.total });
    });
  });
}

try {
  // Sanity: both listings answer 200 with data before they are measured.
  for (const p of ["/api/admin/feature/feature-42/message", "/api/admin/feature/message"]) {
    const r = await fetch(url + p, { headers: { "svc-open-api-key": key } });
    const body = await r.json();
    if (r.status !== 200 || body.data.length === 0) throw new Error(`${p} answered ${r.status}`);
    process.stderr.write(`${p}: ${body.data.length} active messages per page\n`);
  }
  await load("/healthz"); // warm-up
  const base = await load("/healthz");
  const emit = reporter("messages");
  emit("GET /healthz (baseline)", "req/s", base.rps, "req/s");
  emit("GET /healthz (baseline)", "p99", base.p99, "ms");
  for (const [name, path] of [
    ["GET feature active list", "/api/admin/feature/feature-42/message"],
    ["GET global active list", "/api/admin/feature/message"],
  ]) {
    const r = await load(path);
    if (r.errors > 0) throw new Error(`${name}: ${r.errors} errors or non-2xx`);
    emit(name, "req/s", r.rps, "req/s", base.rps);
    emit(name, "p50", r.p50, "ms");
    emit(name, "p99", r.p99, "ms");
  }
} finally {
  server.kill("SIGTERM");
  await new Promise((r) => server.once("exit", r));
  rmSync(dir, { recursive: true, force: true });
}
