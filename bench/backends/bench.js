#!/usr/bin/env node
// Time series on PostgreSQL against SQLite, same run (issue 15, D40), W1:
//   import   `meridian import` of a BENCH_ROWS-row W1 CSV (1,000,000) into a
//            new series, on each backend (rows/s as the command reports it:
//            parse, encode, stage, publish; the PostgreSQL one by COPY);
//   read     the whole-range JSON read of those rows from `meridian serve`
//            on each backend, by bench/values/client.js in rounds
//            (BENCH_REPS, 5), each round one read of each; the ratio is
//            PostgreSQL over SQLite within a round (SQLite the baseline).
// Server, client, importer and PostgreSQL share the machine's two cores.
// Needs a PostgreSQL server: BENCH_PG or MERIDIAN_TEST_PG
// (scripts/with-postgres.sh npm run bench -- backends).
import { spawn } from "node:child_process";
import { createWriteStream, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import { loadSettings } from "../../dist/config/settings.js";
import { openBackend } from "../../dist/app/backend.js";
import { W1_FIELDS, checkW1, text } from "../w1.js";
import { clientRounds, median } from "../client-rounds.js";
import { reporter, spread } from "../report.js";
import { startMeridian } from "../server.js";

const PG = process.env.BENCH_PG || process.env.MERIDIAN_TEST_PG;
if (!PG) {
  process.stderr.write("bench/backends skipped: no PostgreSQL (set BENCH_PG, or run scripts/with-postgres.sh npm run bench -- backends)\n");
  process.exit(0);
}
const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const REPS = Number(process.env.BENCH_REPS ?? 5);
const DATASET = "11111111-0000-0000-0000-0000000000b1";
const SERIES = "22222222-0000-0000-0000-0000000000b1";
const emit = reporter("backends");
checkW1();

const dir = mkdtempSync(join(tmpdir(), "meridian-bench-backends-"));
const dbName = `meridian_bench_${process.pid}`;
const admin = postgres(PG, { max: 1, onnotice: () => {} });
const servers = [];
try {
  const csv = join(dir, "w1.csv");
  const out = createWriteStream(csv);
  for (const chunk of text(ROWS, "iso")) if (!out.write(chunk)) await new Promise((r) => out.once("drain", r));
  await new Promise((r) => out.end(r));

  await admin.unsafe(`CREATE DATABASE ${dbName}`);
  const pgUrl = Object.assign(new URL(PG), { pathname: `/${dbName}` }).toString();
  const backends = [
    { name: "SQLite", db: join(dir, "m.db") },
    { name: "PostgreSQL", db: pgUrl },
  ];

  for (const b of backends) {
    // A dataset, a series and a reading key, through the stores.
    const backend = await openBackend(loadSettings({ MERIDIAN_DB: b.db }), "file-and-folder");
    await backend.metadata.createDataset({ id: DATASET, project: "bench", items: [], properties: [], metadata: {} });
    await backend.metadata.createSeries({ id: SERIES, datasetId: DATASET, item: { name: "W1" }, properties: {}, dataFields: W1_FIELDS });
    b.key = (await backend.apiKeys.create({ clientId: "bench", roles: [], scopes: ["platform_timeseries_read"], projects: ["bench"] })).key;
    await backend.close();

    const said = await run([join(root, "bin", "meridian.js"), "import", "--dataset", DATASET, "--series", SERIES, csv], {
      MERIDIAN_DB: b.db,
    });
    const m = /: (\d+) rows read, .* \((\d+) rows\/s\)/.exec(said); // the summary line (D58)
    if (!m || Number(m[1]) !== ROWS) throw new Error(`import into ${b.name}: ${said}`);
    b.importRate = Number(m[2]);
    process.stderr.write(`${b.name}: ${said}`);
  }
  const [sqlite, pg] = backends;
  emit(`import ${ROWS / 1e6}M W1 rows, PostgreSQL (COPY) vs SQLite`, "rows/s", pg.importRate / 1e6, "M rows/s", sqlite.importRate / 1e6);

  for (const b of backends) {
    const s = await startMeridian(b.db);
    servers.push(s.process);
    b.url = s.address;
  }
  const path = `/api/ts/dataset/${DATASET}/timeseries/${SERIES}/values`;
  const headers = (key) => ({
    "svc-open-api-key": key,
    "svc-service-id": "timeseries",
    "svc-project-id": "bench",
    "svc-dataset-id": DATASET,
  });
  const [a, b] = await clientRounds(
    backends.map((x) => ({ kind: "http", url: x.url, path, headers: headers(x.key) })),
    REPS,
  );
  if (a.bytes !== b.bytes) throw new Error(`the two answers differ in length: ${a.bytes} vs ${b.bytes} bytes`);
  const label = `${ROWS / 1e6}M JSON whole range`;
  emit(`${label}, SQLite`, "rows/s", ROWS / a.seconds / 1e6, "M rows/s");
  emit(
    `${label}, PostgreSQL`,
    "rows/s",
    ROWS / b.seconds / 1e6,
    "M rows/s",
    ROWS / a.seconds / 1e6,
    median(a.rounds.map((s, i) => s / b.rounds[i])),
  );
  emit(`${label}, PostgreSQL`, "time", spread(b.rounds, 1000), "ms", a.seconds * 1000);
} finally {
  for (const p of servers) p.kill();
  await new Promise((r) => setTimeout(r, 300)); // the servers' connections close before the drop
  await admin.unsafe(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => {});
  await admin.end();
  rmSync(dir, { recursive: true, force: true });
}

/** Runs node with args; resolves with its stdout once it exits 0. */
function run(args, env) {
  const p = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "inherit"] });
  let stdout = "";
  p.stdout.on("data", (d) => (stdout += d));
  return new Promise((resolve, reject) =>
    p.once("exit", (code) => (code === 0 ? resolve(stdout) : reject(new Error(`${args[1]} exited ${code}`)))),
  );
}
