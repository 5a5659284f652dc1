#!/usr/bin/env node
// Two checkouts of Meridian compared read for read: the server's CPU time per
// read (utime + stime from /proc, far less moved by other work on the machine
// than wall time) and the client's median wall time, the two servers taking
// turns in rounds, each from its own build over its own seeded W1 database.
// Made for issue 27's layout-only change (a commit before and after, each
// checked out with `git worktree add` and built by `npm ci`):
//   node bench/checkouts.js /path/to/before /path/to/after
// ROUNDS (default 3). Databases are kept in the OS temp folder, one per checkout.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
const ROOTS = process.argv.slice(2, 4).map((p) => resolve(p));
if (ROOTS.length !== 2) throw new Error("usage: node bench/checkouts.js <checkout A> <checkout B>");
const SIDES = ["A", "B"];
const rootOf = (side) => ROOTS[SIDES.indexOf(side)];
const dbOf = (side) => join(tmpdir(), `meridian-checkouts-${basename(rootOf(side))}-${side}.db`);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const tick = 100; // USER_HZ
const seeds = {};
for (const side of SIDES) {
  const root = rootOf(side);
  const db = dbOf(side);
  const meta = `${db}.json`;
  if (!existsSync(meta)) {
    const { seedW1 } = await import(`${root}/bench/seed-w1.js`);
    const s = seedW1(db, [1_000_000, 10_000_000]);
    writeFileSync(meta, JSON.stringify({ ...s, series: [...s.series] }));
  }
  seeds[side] = JSON.parse(readFileSync(meta, "utf8"));
}
const cpu = (pid) => {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return ((Number(f[11]) + Number(f[12])) * 1000) / tick;
};
const results = {};
function curl(url, headers) {
  const args = ["-s", "-o", "/dev/null", "-w", "%{http_code} %{time_total}"];
  for (const [k, v] of Object.entries(headers)) args.push("-H", `${k}: ${v}`);
  const [code, t] = execFileSync("curl", [...args, url], { encoding: "utf8" }).split(" ");
  if (code !== "200") throw new Error(`HTTP ${code} ${url}`);
  return Number(t) * 1000;
}
for (let round = 1; round <= ROUNDS; round++) {
  for (const side of SIDES) {
    const { startMeridian } = await import(`${rootOf(side)}/bench/server.js`);
    const s = seeds[side];
    const server = await startMeridian(dbOf(side));
    const pid = server.process.pid;
    const headers = { "svc-open-api-key": s.key, "svc-service-id": "timeseries", "svc-project-id": "bench", "svc-dataset-id": s.datasetId };
    const series = new Map(s.series);
    const values10M = `/api/ts/dataset/${s.datasetId}/timeseries/${series.get(10_000_000)}/values`;
    const cases = [
      { name: "10M JSON whole range", path: values10M, n: 5 },
      { name: "10M Arrow whole range", path: values10M, n: 5, extra: { accept: "application/vnd.apache.arrow.stream" } },
      { name: "10M JSON whole range, zstd", path: values10M, n: 5, extra: { "accept-encoding": "zstd" } },
      { name: "1M JSON whole range", path: `/api/ts/dataset/${s.datasetId}/timeseries/${series.get(1_000_000)}/values`, n: 10 },
      {
        name: "10M chart width 2000",
        path: `/api/ts/dataset/${s.datasetId}/timeseries/${series.get(10_000_000)}/values/chart?width=2000`,
        n: 20,
      },
      {
        name: "1M chart width 2000",
        path: `/api/ts/dataset/${s.datasetId}/timeseries/${series.get(1_000_000)}/values/chart?width=2000`,
        n: 20,
      },
    ];
    for (const { name, path, n, extra } of cases) {
      const h = { ...headers, ...extra };
      curl(`${server.address}${path}`, h); // warm-up
      const c0 = cpu(pid);
      const walls = [];
      for (let i = 0; i < n; i++) walls.push(curl(`${server.address}${path}`, h));
      const perCpu = (cpu(pid) - c0) / n;
      walls.sort((a, b) => a - b);
      ((results[name] ??= {})[side] ??= []).push({ cpu: perCpu, wall: walls[walls.length >> 1] });
      console.error(`round ${round} ${side} ${name}: cpu ${perCpu.toFixed(1)} ms, wall median ${walls[walls.length >> 1].toFixed(1)} ms`);
    }
    server.process.kill();
    await new Promise((r) => server.process.once("exit", r));
  }
}
const med = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
for (const [name, r] of Object.entries(results)) {
  const [a, b] = [r.A, r.B];
  const cpuA = med(a.map((x) => x.cpu));
  const cpuB = med(b.map((x) => x.cpu));
  console.log(
    `${name}: CPU per read ${cpuA.toFixed(1)} ms (A) and ${cpuB.toFixed(1)} ms (B), B/A ${(cpuB / cpuA).toFixed(3)}x; rounds A ${a.map((x) => x.cpu).join(", ")}, B ${b.map((x) => x.cpu).join(", ")}; wall medians ${med(a.map((x) => x.wall)).toFixed(1)} and ${med(b.map((x) => x.wall)).toFixed(1)} ms`,
  );
}
