#!/usr/bin/env node
// The server while `meridian import` runs (issue 13 item 6, D51): does an
// import of W1 disturb the server on the same database file?
//
// Method. One temporary database; `meridian serve` in its own process (as
// bench/server.js starts it); a W1 CSV of BENCH_IMPORT_ROWS rows (8,000,000
// by default, bench/w1.js) in a temporary file. This process probes the
// server over keep-alive HTTP/1.1, each probe one request at a time, a new
// one as soon as the last is answered plus a pause:
//   healthz   GET /healthz                             every 10 ms
//   message   POST /api/admin/feature/message          every 25 ms (a write)
//   upload    POST .../values of 10 rows, another series every 50 ms (a write)
// First for BENCH_BASELINE_SECONDS (8) with nothing else running (the
// baseline), then while `node bin/meridian.js import` loads the CSV into a
// series, from its start to its exit. Per probe and phase: p50, p99, max
// latency and the count of 5xx answers (any non-2xx is counted too); the
// ratios are import / baseline. The import's own time is printed as well.
// Client, server and importer share the machine's cores, as they would in
// production on a small host.
//
// Disk (issue 26 item 6, D58): the database file's size before the import
// and after it (once the server has stopped, so the WAL is checkpointed into
// the file), per imported row, against the blocks' own size: the pages
// SQLite gives the blocks table and its index (dbstat), and their payload
// bytes. An import gives back the space of its staging: the file's growth
// stays within 10 % of the blocks' own pages.
import { spawn } from "node:child_process";
import { createWriteStream, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { openDatabase } from "../../dist/sqlite/database.js";
import { SqliteApiKeyStore } from "../../dist/sqlite/api-key-store.js";
import { SqliteMetadataStore as MetadataStore } from "../../dist/sqlite/metadata-store.js";
import { reporter } from "../report.js";
import { startMeridian } from "../server.js";
import { text, W1_FIELDS } from "../w1.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const ROWS = Number(process.env.BENCH_IMPORT_ROWS ?? 8_000_000);
const BASELINE_S = Number(process.env.BENCH_BASELINE_SECONDS ?? 8);
const report = reporter("import");

const dir = mkdtempSync(join(tmpdir(), "meridian-bench-import-"));
const dbPath = join(dir, "m.db");
const csv = join(dir, "w1.csv");
const DATASET = "11111111-0000-0000-0000-000000000001";
const IMPORTED = "22222222-0000-0000-0000-000000000001";
const UPLOADED = "22222222-0000-0000-0000-000000000002";

let server;
try {
  await writeCsv(csv, ROWS);
  const db = openDatabase(dbPath);
  const keys = new SqliteApiKeyStore(db);
  const messageKey = keys.createNow({
    clientId: "bench",
    roles: ["BackOffice"],
    scopes: ["platform_iam_featurestatus_readwrite"],
    projects: [],
  }).key;
  const tsKey = keys.createNow({ clientId: "bench", roles: [], scopes: ["platform_timeseries_readwrite"], projects: ["bench"] }).key;
  const meta = new MetadataStore(db);
  meta.createDataset({ id: DATASET, project: "bench", items: [], properties: [], metadata: {} });
  for (const id of [IMPORTED, UPLOADED])
    meta.createSeries({ id, datasetId: DATASET, item: { name: id }, properties: {}, dataFields: W1_FIELDS });
  db.close();
  const diskBefore = diskOf(dbPath);

  const started = await startMeridian(dbPath);
  server = started.process;
  const probes = makeProbes(started.address, messageKey, tsKey);

  process.stderr.write(`baseline: ${BASELINE_S} s of probes, no import\n`);
  const baseline = await runProbes(probes, new Promise((r) => setTimeout(r, BASELINE_S * 1000)));

  process.stderr.write(`import: ${ROWS} W1 rows while the same probes run\n`);
  const t0 = performance.now();
  const importer = spawn(process.execPath, [join(root, "bin", "meridian.js"), "import", "--dataset", DATASET, "--series", IMPORTED, csv], {
    env: { ...process.env, MERIDIAN_DB: dbPath },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  importer.stdout.on("data", (d) => (out += d));
  const done = new Promise((resolve) => importer.once("exit", (code) => resolve(code)));
  const during = await runProbes(probes, done);
  const code = await done;
  const importS = (performance.now() - t0) / 1000;
  process.stderr.write(out);
  if (code !== 0) throw new Error(`meridian import exited ${code}`);
  report(`import ${ROWS / 1e6}M W1 rows`, "time", importS, "s");

  for (const name of Object.keys(probes)) {
    const [b, d] = [summary(baseline[name]), summary(during[name])];
    const c = `${name} during import`;
    report(c, "p50", d.p50, "ms", b.p50);
    report(c, "p99", d.p99, "ms", b.p99);
    report(c, "max", d.max, "ms", b.max);
    report(c, "requests", d.n, "", b.n);
    report(c, "5xx", d.s5xx, "", b.s5xx, null);
    report(c, "other non-2xx", d.other, "", b.other, null);
    process.stderr.write(`${name}: baseline ${JSON.stringify(b)} during import ${JSON.stringify(d)}\n`);
  }

  server.kill("SIGTERM");
  await new Promise((r) => (server.exitCode !== null ? r() : server.once("exit", r)));
  server = undefined;
  const diskAfter = diskOf(dbPath);
  const perRow = (bytes) => bytes / ROWS;
  const c = `import ${ROWS / 1e6}M W1 rows`;
  const grown = diskAfter.file - diskBefore.file;
  report(c, "file growth per row", perRow(grown), "B", perRow(diskAfter.blocksPages), grown / diskAfter.blocksPages);
  report(c, "file per row", perRow(diskAfter.file), "B");
  report(c, "free pages per row", perRow(diskAfter.free), "B");
  report(c, "blocks' pages per row", perRow(diskAfter.blocksPages), "B");
  report(c, "blocks' payload per row", perRow(diskAfter.payload), "B");
  process.stderr.write(`disk before ${JSON.stringify(diskBefore)}\ndisk after ${JSON.stringify(diskAfter)}\n`);
} finally {
  server?.kill("SIGTERM");
  rmSync(dir, { recursive: true, force: true });
}

/** The database file's bytes, its free pages' bytes, and the blocks' own size (their pages, their payload). */
function diskOf(path) {
  const db = new Database(path, { readonly: true });
  try {
    const page = db.pragma("page_size", { simple: true });
    return {
      file: statSync(path).size,
      free: db.pragma("freelist_count", { simple: true }) * page,
      blocksPages: db.prepare("SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name IN ('blocks', 'blocks_by_time')").pluck().get(),
      payload: db.prepare("SELECT coalesce(sum(length(payload)), 0) FROM blocks").pluck().get(),
    };
  } finally {
    db.close();
  }
}

async function writeCsv(path, rows) {
  const out = createWriteStream(path);
  for (const chunk of text(rows, "iso")) if (!out.write(chunk)) await new Promise((r) => out.once("drain", r));
  await new Promise((r) => out.end(r));
}

/** Each probe sends one request and says its status. */
function makeProbes(base, messageKey, tsKey) {
  const day = 86_400_000;
  const ts = {
    "svc-open-api-key": tsKey,
    "svc-service-id": "timeseries",
    "svc-project-id": "bench",
    "svc-dataset-id": DATASET,
    "content-type": "application/json",
  };
  let t = Date.UTC(1990, 0, 1) / 1000;
  const stamp = (s) => new Date(s * 1000).toISOString().slice(0, 19);
  const send = async (path, init) => {
    const r = await fetch(base + path, init);
    await r.arrayBuffer();
    return r.status;
  };
  return {
    healthz: { every: 10, send: () => send("/healthz") },
    message: {
      every: 25,
      send: () =>
        send("/api/admin/feature/message", {
          method: "POST",
          headers: { "svc-open-api-key": messageKey, "content-type": "application/json" },
          body: JSON.stringify({
            type: "Informational",
            title: "Import running",
            body: "probe",
            startDate: new Date(Date.now() - day).toISOString().slice(0, 19) + "Z",
            expiringDate: new Date(Date.now() + day).toISOString().slice(0, 19) + "Z",
          }),
        }),
    },
    upload: {
      every: 50,
      send: () => {
        const data = Array.from({ length: 10 }, () => [stamp((t += 60)), 12.5, 0]);
        return send(`/api/ts/dataset/${DATASET}/timeseries/${UPLOADED}/values`, {
          method: "POST",
          headers: ts,
          body: JSON.stringify({ data }),
        });
      },
    },
  };
}

/** Runs every probe in its own loop until `until` settles; latencies and statuses per probe. */
async function runProbes(probes, until) {
  let stop = false;
  until.then(() => (stop = true));
  const results = {};
  await Promise.all(
    Object.entries(probes).map(async ([name, p]) => {
      const got = (results[name] = []);
      while (!stop) {
        const t0 = performance.now();
        let status;
        try {
          status = await p.send();
        } catch {
          status = 0; // no answer at all
        }
        got.push({ ms: performance.now() - t0, status });
        await new Promise((r) => setTimeout(r, p.every));
      }
    }),
  );
  return results;
}

function summary(samples) {
  const ms = samples.map((s) => s.ms).sort((a, b) => a - b);
  const q = (f) => ms[Math.min(ms.length - 1, Math.floor(f * ms.length))];
  const round = (x) => Math.round(x * 100) / 100;
  return {
    n: ms.length,
    p50: round(q(0.5)),
    p99: round(q(0.99)),
    max: round(ms[ms.length - 1]),
    s5xx: samples.filter((s) => s.status >= 500 || s.status === 0).length,
    other: samples.filter((s) => s.status !== 0 && (s.status < 200 || s.status >= 300) && s.status < 500).length,
  };
}
