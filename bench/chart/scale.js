#!/usr/bin/env node
// Charts whose cost grows with the width, not the rows (D65, issue 30 item 5):
// one W1 series each of 10M, 100M and 1B rows (BENCH_SCALE_ROWS), charted
// over the whole range at width 2,000 and 200, end to end over HTTP by a
// client in its own process (median of BENCH_REPS, default 5, after a
// warm-up round: the block cache warm) and by the server's own clock (its
// request log). Baseline, same run: M4 that decodes every block of the range,
// as the chart read did before D65 (the same addon, the blocks read from the
// same file in batches, here in this process, without HTTP); its rows must be
// the server's, row for row. Also the server's resident memory across the 1B
// charts. Targets on this machine, width 2,000: 10M under 10 ms, 100M under
// 30 ms, 1B under 100 ms of server time; at width 200, 100M at most 3x 10M.
//
// Seeding writes blocks directly (bench/seed-w1.js seedW1Blocks): generating
// and encoding 1B rows takes about half an hour here, an import of their CSV
// (about 30 GB of text) far longer. The database is kept in bench/.work and
// used again by the next run (delete it to seed again).
import Database from "better-sqlite3";
import { mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Chart } from "../../dist/native/chart.js";
import { decodeBlock } from "../../dist/timeseries/blocks/block-codec.js";
import { checkW1, isoTime } from "../w1.js";
import { PROJECT, seedW1Blocks } from "../seed-w1.js";
import { reporter } from "../report.js";
import { clientRounds, median } from "../client-rounds.js";
import { serverTimes, startMeridian } from "../server.js";

const sizes = (process.env.BENCH_SCALE_ROWS ?? "10000000,100000000,1000000000").split(",").map(Number);
// Of the series seeded, those charted (all unless named): to measure one again without seeding anew.
const charted = process.env.BENCH_SCALE_CHART?.split(",").map(Number) ?? sizes;
const REPS = Number(process.env.BENCH_REPS ?? 5);
const WIDTHS = [2000, 200];
const emit = reporter("chart-scale");
const label = (n) => (n >= 1e9 ? `${n / 1e9}B` : `${n / 1e6}M`);

checkW1();
const work = join(dirname(fileURLToPath(import.meta.url)), "..", ".work");
mkdirSync(work, { recursive: true });
const dbPath = join(work, `chart-scale-${sizes.map(label).join("-")}.db`);
const { datasetId, series, key } = seedW1Blocks(dbPath, sizes);

/** Decode-everything M4 over the series' stored blocks, as the chart read did before D65: its time and the rows' timestamps and values. */
async function decodeEverything(db, sid, from, to, width) {
  const batch = db.prepare(
    "SELECT last_ts, payload FROM blocks WHERE sid = ? AND last_ts >= ? AND first_ts <= ? ORDER BY first_ts LIMIT 64",
  );
  const started = performance.now();
  const chart = new Chart(from, to, width);
  for (let at = from; ;) {
    const found = batch.all(sid, at, to);
    if (found.length > 0) chart.add(found.map((b) => b.payload));
    if (found.length < 64) break;
    at = found[found.length - 1].last_ts + 1;
    await Promise.resolve(); // as the server's walk, between batches
  }
  const out = chart.finish();
  const ms = performance.now() - started;
  const rows = out.flatMap((p) => {
    const b = decodeBlock(p);
    return Array.from(b.timestamps, (t, i) => [isoTime(t), b.columns[0].values[i], b.columns[1].values[i]]);
  });
  return { ms, rows };
}

/** Resident and peak resident memory of a process, in MiB. */
function memoryOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (name) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)[1]);
  return { rss: kb("VmRSS") / 1024, peak: kb("VmHWM") / 1024 };
}

const server = await startMeridian(dbPath);
const serverMs = serverTimes(server, "/values/chart");
const url = server.address;
const headers = { "svc-open-api-key": key, "svc-service-id": "timeseries", "svc-project-id": PROJECT, "svc-dataset-id": datasetId };
const db = new Database(dbPath, { readonly: true });
const sidOf = db.prepare("SELECT sid FROM time_series WHERE id = ?").pluck();
const boundsOf = db.prepare("SELECT min(first_ts) AS first, max(last_ts) AS last FROM blocks WHERE sid = ?");
const serverTime = {};
try {
  for (const n of charted) {
    const id = series.get(n);
    const sid = sidOf.get(id);
    const { first, last } = boundsOf.get(sid);
    const before = memoryOf(server.process.pid);
    for (const width of WIDTHS) {
      const path = `/api/ts/dataset/${datasetId}/timeseries/${id}/values/chart?from=${isoTime(first)}&to=${isoTime(last)}&width=${width}`;
      serverMs.length = 0;
      const [chart] = await clientRounds([{ kind: "http", url, path, headers }], REPS);
      const own = median(serverMs.slice(1)); // the warm-up round's read left out: it fills the cache
      serverTime[`${n}:${width}`] = own;
      const answer = (await (await fetch(url + path, { headers })).json()).data;
      const base = await decodeEverything(db, sid, first, last, width);
      const same =
        answer.length === base.rows.length &&
        answer.every((r, i) => r[0] === base.rows[i][0] && Math.fround(r[1]) === base.rows[i][1] && r[2] === base.rows[i][2]);
      if (!same)
        throw new Error(
          `${label(n)} width ${width}: the chart read's ${answer.length} rows are not decode-everything M4's ${base.rows.length}`,
        );
      const c = `${label(n)} rows, chart width ${width}, warm cache`;
      emit(c, "server time (request log)", own, "ms", base.ms);
      emit(c, "end to end (client)", chart.seconds * 1000, "ms", base.ms);
      emit(c, "rows answered (= decode-everything M4's)", answer.length, "rows");
    }
    const after = memoryOf(server.process.pid);
    emit(`${label(n)} rows, charts`, "server RSS after (peak growth across them)", after.rss, "MiB", before.rss);
    emit(`${label(n)} rows, charts`, "server peak RSS growth", after.peak - before.peak, "MiB");
  }
  if (charted.includes(1e7) && charted.includes(1e8))
    emit("width 200: 100M rows over 10M rows", "server time ratio", serverTime["100000000:200"] / serverTime["10000000:200"], "x");
} finally {
  server.process.kill();
  db.close();
}
