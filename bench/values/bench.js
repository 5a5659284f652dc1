#!/usr/bin/env node
// Value reads (issue 5) on W1: 1,000,000 and 10,000,000 rows of one series,
// read over HTTP as JSON (whole range; paged at 100,000 and 5,000,000) and
// over gRPC (columns; by a plain HTTP/2 gRPC client and by grpc-js), each
// read by a client in its own process that takes every byte (median of BENCH_REPS, default 5,
// after one warm-up read; the whole-range read and the paged walks of a size
// run in rounds, and a walk's ratio is the median of its ratios to the whole
// read of the same round). Baseline, same run: the
// naive server (naive-server.js: SQLite rows and JSON.stringify) reading the
// same 1,000,000 rows. Also the Arrow and Parquet answers against JSON by
// curl (D64), and the server's peak resident memory growth during one
// whole-range read of each size, identity and zstd, JSON, Arrow and Parquet
// (D28), each on a fresh server. The Arrow read's time and the server's CPU
// time per read are also set against a server that only sends the same bytes
// (floor-server.js): the transport's floor.
// BENCH_ROWS=1000000 limits the sizes; BENCH_ONLY=columnar runs only those two parts.
import Database from "better-sqlite3";
import { execFileSync } from "node:child_process";
import { create, toBinary } from "@bufbuild/protobuf";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ReadValuesRequestSchema } from "../../dist/gen/meridian/timeseries/v1/time_series_pb.js";
import { checkW1, rows } from "../w1.js";
import { PROJECT, seedW1 } from "../seed-w1.js";
import { reporter, spread } from "../report.js";
import { clientRounds as clientRoundsOf, median, roundRatio } from "../client-rounds.js";
import { startMeridian, startProcess } from "../server.js";

const here = dirname(fileURLToPath(import.meta.url));
const sizes = (process.env.BENCH_ROWS ?? "1000000,10000000").split(",").map(Number);
if (!sizes.includes(1_000_000)) sizes.unshift(1_000_000); // the compression cases read the 1M series
const REPS = Number(process.env.BENCH_REPS ?? 5);
const emit = reporter("values");

checkW1();

const dir = mkdtempSync(join(tmpdir(), "meridian-bench-values-"));
const dbPath = join(dir, "m.db");

const { datasetId, series, key } = seedW1(dbPath, sizes);

// The baseline's table: the same 1,000,000 rows, the value as the decimal it was generated as.
const naivePath = join(dir, "naive.db");
{
  const db = new Database(naivePath);
  db.exec("CREATE TABLE rows (ts INTEGER PRIMARY KEY, value REAL, flag INTEGER)");
  const insert = db.prepare("INSERT INTO rows VALUES (?, ?, ?)");
  db.transaction(() => {
    for (const [t, v, f] of rows(1_000_000)) insert.run(t, Number(v), f);
  })();
  db.close();
}

const server = await startMeridian(dbPath);
const naive = await startProcess([join(here, "naive-server.js"), naivePath], {}, /listening (\d+)/);
const floor = await startProcess([join(here, "floor-server.js")], {}, /listening (\d+)/);
const url = server.address;
const naiveUrl = `http://127.0.0.1:${naive.address}`;
const headers = (paged) => ({
  "svc-open-api-key": key,
  "svc-service-id": "timeseries",
  "svc-project-id": PROJECT,
  "svc-dataset-id": datasetId,
  ...(paged ? { "api-version": "3" } : {}),
});

const valuesPath = (n) => `/api/ts/dataset/${datasetId}/timeseries/${series.get(n)}/values`;

const clientRounds = (reads, reps = REPS) => clientRoundsOf(reads, reps);
const client = async (spec, reps) => (await clientRounds([spec], reps))[0];

/** One GET by curl into /dev/null: its total time and the bytes it took. */
function curl(target, hdrs) {
  const args = ["-s", "-o", "/dev/null", "-w", "%{http_code} %{time_total} %{size_download}"];
  for (const [k, v] of Object.entries(hdrs)) args.push("-H", `${k}: ${v}`);
  const out = execFileSync("curl", [...args, target], { encoding: "utf8" });
  const [status, seconds, bytes] = out.trim().split(" ");
  if (status !== "200") throw new Error(`curl: HTTP ${status} for ${target}`);
  return { seconds: Number(seconds), bytes: Number(bytes) };
}

/** CPU time (user + system) the process has used so far, in ms (/proc's clock ticks: 100 a second). */
function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function rssKiB(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(m[1]);
}

try {
  if (process.env.BENCH_ONLY !== "columnar") {
    const base = await client({ kind: "http", url: naiveUrl, path: "/values", headers: {} }, Math.min(REPS, 3));
    emit("naive baseline 1M JSON (SQLite + JSON.stringify)", "time", spread(base.rounds, 1000), "ms");
    for (const n of sizes) {
      const path = valuesPath(n);
      const label = `${n / 1e6}M`;
      // The whole-range read and the paged walks in rounds: a paged walk's ratio is taken against the whole read of its round.
      const walks = [
        [100_000, false],
        [100_000, true],
        [5_000_000, false],
      ];
      const [whole, ...paged] = await clientRounds([
        { kind: "http", url, path, headers: headers(false) },
        ...walks.map(([limit, keepAlive]) => ({ kind: "http", url, path, headers: headers(true), paged: true, limit, keepAlive })),
      ]);
      emit(`${label} JSON whole range`, "time", spread(whole.rounds, 1000), "ms");
      emit(
        `${label} JSON whole range`,
        "rows/s",
        n / whole.seconds / 1e6,
        "M rows/s",
        n === 1_000_000 ? 1e6 / base.seconds / 1e6 : undefined,
      );
      emit(`${label} JSON whole range`, "body", whole.bytes / 1e6, "MB");
      walks.forEach(([limit, keepAlive], i) => {
        const p = paged[i];
        emit(
          `${label} JSON paged limit=${limit} (${p.pages} pages${keepAlive ? ", one kept-alive connection" : ""})`,
          "time",
          p.seconds * 1000,
          "ms",
          whole.seconds * 1000,
          roundRatio(p, whole),
        );
      });
      const request = Buffer.from(
        toBinary(ReadValuesRequestSchema, create(ReadValuesRequestSchema, { datasetId, timeSeriesId: series.get(n) })),
      ).toString("base64");
      for (const [kind, name] of [
        ["h2grpc", "gRPC columns (HTTP/2 client)"],
        ["grpc", "gRPC columns (grpc-js client)"],
      ]) {
        const g = await client({
          kind,
          url,
          path: "/meridian.timeseries.v1.TimeSeriesService/ReadValues",
          headers: headers(false),
          request,
        });
        emit(`${label} ${name}`, "time", spread(g.rounds, 1000), "ms");
        emit(`${label} ${name}`, "rows/s", n / g.seconds / 1e6, "M rows/s");
        emit(`${label} ${name}`, "message bytes", g.bytes / 1e6, "MB");
      }
    }
    // D44: the 1M whole-range read in each coding, beside identity in the same rounds (bytes as sent; the client does not decode).
    {
      const codings = ["identity", "zstd", "br", "gzip"];
      const reads = await clientRounds(
        codings.map((c) => ({ kind: "http", url, path: valuesPath(1_000_000), headers: { ...headers(false), "accept-encoding": c } })),
      );
      const [plain] = reads;
      codings.forEach((c, i) => {
        const r = reads[i];
        emit(`1M JSON whole range, ${c}`, "rows/s", 1 / r.seconds, "M rows/s", i === 0 ? undefined : 1 / plain.seconds);
        emit(`1M JSON whole range, ${c}`, "bytes", r.bytes / 1e6, "MB", i === 0 ? undefined : plain.bytes / 1e6);
      });
    }
  }
  // D64: Arrow and Parquet against JSON, the largest series' whole range, read by curl into /dev/null as a
  // user would, alternating in rounds (the first a warm-up).
  {
    const n = Math.max(...sizes);
    const label = `${n / 1e6}M`;
    const formats = [
      ["JSON", "application/json"],
      ["Arrow", "application/vnd.apache.arrow.stream"],
      ["Parquet", "application/vnd.apache.parquet"],
    ];
    const times = formats.map(() => []);
    const bytes = [];
    const floorTimes = [];
    // The server's CPU time (all its threads) per read, summed over the rounds: on two cores a read's wall
    // time follows the CPU that the server and curl spend together, and CPU time drifts less than wall time.
    const cpu = formats.map(() => 0);
    let floorCpu = 0;
    const timed = (pid, read) => {
      const before = cpuMs(pid);
      const r = read();
      return { ...r, cpu: cpuMs(pid) - before };
    };
    for (let round = 0; round <= REPS; round++) {
      formats.forEach(([, accept], i) => {
        const r = timed(server.process.pid, () => curl(url + valuesPath(n), { ...headers(false), accept }));
        if (round > 0) {
          times[i].push(r.seconds);
          cpu[i] += r.cpu;
        }
        bytes[i] = r.bytes;
      });
      // The transport's floor: the Arrow answer's bytes from a server that only sends them, in writes of about
      // the size Arrow's are (the walk's groups, at most 1 MiB).
      const r = timed(floor.process.pid, () => curl(`http://127.0.0.1:${floor.address}/?bytes=${bytes[1]}&chunk=${1 << 20}`, {}));
      if (round > 0) {
        floorTimes.push(r.seconds);
        floorCpu += r.cpu;
      }
    }
    const [json, arrow, parquet] = times.map(median);
    const sendOnly = median(floorTimes);
    // A format's ratio is the median over rounds of its speed over JSON's in the same round, as the paged walks'
    // above: reads seconds apart share the machine's pace, which drifts by 10-20% between minutes here.
    const overJsonByRound = (i) => times[i].map((t, round) => times[0][round] / t);
    const overJson = (i) => median(overJsonByRound(i));
    emit(`${label} JSON whole range (curl)`, "rows/s", n / json / 1e6, "M rows/s");
    emit(`${label} Arrow whole range (curl)`, "rows/s", n / arrow / 1e6, "M rows/s", n / json / 1e6, overJson(1));
    // The same ratio round by round, with its lowest and highest: how far one run's median may be trusted.
    emit(`${label} Arrow over JSON, round by round (curl)`, "speed ratio", spread(overJsonByRound(1)), "x");
    emit(`${label} Arrow whole range (curl)`, "body", bytes[1] / 1e6, "MB", bytes[0] / 1e6);
    // Arrow's time against sending its bytes and nothing else (floor-server.js): the ratio above 1 is Meridian's own share.
    emit(
      `${label} Arrow whole range vs send-only server (curl)`,
      "time",
      arrow * 1000,
      "ms",
      sendOnly * 1000,
      median(times[1].map((t, round) => t / floorTimes[round])),
    );
    // Server CPU per read (mean over the rounds), Arrow's against the send-only server's: what is Meridian's own.
    formats.forEach(([name], i) => emit(`${label} ${name} whole range (curl)`, "server CPU/read", cpu[i] / REPS, "ms"));
    emit(`${label} Arrow whole range vs send-only server (curl)`, "server CPU/read", cpu[1] / REPS, "ms", floorCpu / REPS);
    emit(`${label} Parquet whole range (curl)`, "rows/s", n / parquet / 1e6, "M rows/s", n / json / 1e6, overJson(2));
    emit(`${label} Parquet whole range (curl)`, "bytes/row", bytes[2] / n, "B", bytes[0] / n);
  }
  // D28: the server's peak resident memory growth during one whole-range read, 1M and 10M rows,
  // identity and zstd, JSON, Arrow and Parquet; each on a server of its own, warmed up by a short read of
  // the same kind, so that one read's growth is not hidden by an earlier one's.
  for (const { format, accept, codings } of [
    { format: "JSON", accept: "application/json", codings: ["identity", "zstd"] },
    { format: "Arrow", accept: "application/vnd.apache.arrow.stream", codings: ["identity", "zstd"] },
    { format: "Parquet", accept: "application/vnd.apache.parquet", codings: ["identity"] }, // never compressed again: its pages are zstd
  ]) {
    for (const coding of codings) {
      for (const n of sizes) {
        const fresh = await startMeridian(dbPath);
        try {
          const h = { ...headers(false), accept, "accept-encoding": coding };
          await client({ kind: "http", url: fresh.address, path: valuesPath(n) + "?to=2000-01-02T00:00:00", headers: h }, 1);
          const pid = fresh.process.pid;
          const before = rssKiB(pid);
          let peak = before;
          const poll = setInterval(() => (peak = Math.max(peak, rssKiB(pid))), 5);
          await client({ kind: "http", url: fresh.address, path: valuesPath(n), headers: h }, 1);
          clearInterval(poll);
          peak = Math.max(peak, rssKiB(pid));
          emit(`${n / 1e6}M ${format} whole range, ${coding}`, "server RSS growth", (peak - before) / 1024, "MiB");
        } finally {
          fresh.process.kill();
        }
      }
    }
  }
} finally {
  server.process.kill();
  naive.process.kill();
  floor.process.kill();
  rmSync(dir, { recursive: true, force: true });
}
