#!/usr/bin/env node
// The server's memory across charts of the longest series (issue 30 item 5,
// D28): a fresh server charts the whole range of the 1B-row W1 series of
// bench/chart/scale.js's database (seed it with that bench first) once, then
// 19 more times (widths 2,000 and 200 in turn); printed: its peak resident
// memory growth after the first chart and after all 20, with the block cache
// off (MERIDIAN_BLOCK_CACHE_MB=0) and at its default, and the median server
// time (request log) of the charts after the first at each width, and what the
// block cache says it holds (meridian_block_cache_bytes).
//   node bench/chart/memory.js [checkout ...]
// Several checkouts (each built, `npm ci`) take turns over the same database,
// so that their figures are measured in one run (BENCH_ROUNDS rounds, default 1).
// BENCH_SCALE_CHART names another seeded size; BENCH_CACHE_MB the settings (default "0,256");
// BENCH_ENCODING the Accept-Encoding asked (default identity).
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { PROJECT } from "../seed-w1.js";
import { reporter, spread } from "../report.js";

const here = dirname(fileURLToPath(import.meta.url));
const ROOTS = process.argv.length > 2 ? process.argv.slice(2).map((p) => resolve(p)) : [join(here, "..", "..")];
const SIZE = Number(process.env.BENCH_SCALE_CHART ?? 1e9);
const CACHES = (process.env.BENCH_CACHE_MB ?? "0,256").split(",");
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);
const CHARTS = 20;
const WIDTHS = [2000, 200];
const emit = reporter("chart-memory");
const label = (n) => (n >= 1e9 ? `${n / 1e9}B` : `${n / 1e6}M`);

const dbPath = join(here, "..", ".work", "chart-scale-10M-100M-1B.db");
const seeded = JSON.parse(readFileSync(`${dbPath}.json`, "utf8"));
const id = new Map(seeded.series).get(SIZE);
if (id === undefined) throw new Error(`no ${SIZE}-row series in ${dbPath}: run bench/chart/scale.js first`);
// Identity by default: a compressed answer's own memory (the compressor's) is not the chart's.
const ENCODING = process.env.BENCH_ENCODING ?? "identity";
const headers = {
  "svc-open-api-key": seeded.key,
  "svc-service-id": "timeseries",
  "svc-project-id": PROJECT,
  "svc-dataset-id": seeded.datasetId,
  "accept-encoding": ENCODING,
};

/** Resident and peak resident memory of a process, in MiB. */
function memoryOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (name) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)[1]);
  return { rss: kb("VmRSS") / 1024, peak: kb("VmHWM") / 1024 };
}

async function chart(address, width) {
  const path = `/api/ts/dataset/${seeded.datasetId}/timeseries/${id}/values/chart?width=${width}`;
  const res = await fetch(address + path, { headers });
  if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
  return (await res.json()).data.length;
}

const results = {};
for (let round = 1; round <= ROUNDS; round++) {
  for (const root of ROOTS) {
    const { startMeridian, serverTimes } = await import(join(root, "bench", "server.js"));
    for (const mb of CACHES) {
      process.env.MERIDIAN_BLOCK_CACHE_MB = mb;
      process.env.MERIDIAN_METRICS = "public"; // /metrics on the API's port: the cache's own count
      const server = await startMeridian(dbPath);
      const times = serverTimes(server, "/values/chart");
      const pid = server.process.pid;
      const before = memoryOf(pid);
      const at = {};
      for (let i = 1; i <= CHARTS; i++) {
        await chart(server.address, WIDTHS[(i - 1) % WIDTHS.length]);
        if (i === 1) at.first = memoryOf(pid);
      }
      await new Promise((r) => setTimeout(r, 200)); // the request log of the last chart
      at.last = memoryOf(pid);
      const metrics = await (await fetch(`${server.address}/metrics`)).text();
      const cached = /^meridian_block_cache_bytes (\S+)$/m.exec(metrics)?.[1]; // none before the metric existed
      const r = (results[`${root} cache ${mb} MB`] ??= {
        first: [],
        last: [],
        rss: [],
        cached: [],
        ...Object.fromEntries(WIDTHS.map((w) => [w, []])),
      });
      if (cached !== undefined) r.cached.push(Number(cached) / 1048576);
      r.first.push(at.first.peak - before.peak);
      r.last.push(at.last.peak - before.peak);
      r.rss.push(at.last.rss - before.rss);
      WIDTHS.forEach((w, k) => r[w].push(...times.slice(1).filter((_, i) => (i + 1) % WIDTHS.length === k)));
      server.process.kill();
      await new Promise((res) => server.process.once("exit", res));
      process.stderr.write(
        `round ${round} ${root} cache ${mb} MB: peak +${(at.first.peak - before.peak).toFixed(1)} MiB after 1, +${(at.last.peak - before.peak).toFixed(1)} after ${CHARTS}\n`,
      );
    }
  }
}
for (const [c, r] of Object.entries(results)) {
  const name = `${label(SIZE)} rows, ${c}, ${ENCODING}`;
  emit(name, "server peak RSS growth, first chart", spread(r.first), "MiB");
  emit(name, `server peak RSS growth, ${CHARTS} charts`, spread(r.last), "MiB");
  emit(name, `server RSS growth after ${CHARTS} charts`, spread(r.rss), "MiB");
  if (r.cached.length > 0) emit(name, "block cache held, its own count (meridian_block_cache_bytes)", spread(r.cached), "MiB");
  for (const w of WIDTHS) emit(name, `server time, width ${w} (charts 2..${CHARTS})`, spread(r[w]), "ms");
}
