#!/usr/bin/env node
// The chart read (issue 18, D50) on W1: 10,000,000 rows (and 1,000,000) of
// one series at width 2,000, read end to end over HTTP by a client in its own
// process (median of BENCH_REPS, default 5, after a warm-up; all reads of a
// size in rounds, so they see the same moments of a noisy machine), as JSON
// with each encoding the client may offer, and as columns over gRPC.
// Baselines, same run: the whole-range JSON read of the same series (what a
// chart costs today: every row), and a client that reads it whole, parses it
// and runs M4 in plain TypeScript (test/helpers/m4.ts). Also the server's own
// time for the chart reads, from its request log. Target: the 10M chart under
// 30 ms end to end, under 200 KB sent.
import { create, toBinary } from "@bufbuild/protobuf";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ReadChartRequestSchema } from "../../dist/gen/meridian/timeseries/v1/time_series_pb.js";
import { checkW1 } from "../w1.js";
import { PROJECT, seedW1 } from "../seed-w1.js";
import { reporter, spread } from "../report.js";
import { clientRounds, roundRatio } from "../client-rounds.js";
import { serverTimes, startMeridian } from "../server.js";

const sizes = (process.env.BENCH_ROWS ?? "1000000,10000000").split(",").map(Number);
const REPS = Number(process.env.BENCH_REPS ?? 5);
const WIDTH = 2000;
const emit = reporter("chart");

checkW1();
const dir = mkdtempSync(join(tmpdir(), "meridian-bench-chart-"));
const dbPath = join(dir, "m.db");
const { datasetId, series, key } = seedW1(dbPath, sizes);

const server = await startMeridian(dbPath);
// The server's own time for each chart read, from its request log.
const serverMs = serverTimes(server, "/values/chart");
const url = server.address;
const headers = { "svc-open-api-key": key, "svc-service-id": "timeseries", "svc-project-id": PROJECT, "svc-dataset-id": datasetId };
try {
  for (const n of sizes) {
    const label = `${n / 1e6}M`;
    const values = `/api/ts/dataset/${datasetId}/timeseries/${series.get(n)}/values`;
    const chart = `${values}/chart?width=${WIDTH}`;
    const codings = ["identity", "gzip", "zstd", "br"];
    const request = Buffer.from(
      toBinary(ReadChartRequestSchema, create(ReadChartRequestSchema, { datasetId, timeSeriesId: series.get(n), width: BigInt(WIDTH) })),
    ).toString("base64");
    serverMs.length = 0;
    const [whole, ...charts] = await clientRounds(
      [
        { kind: "http", url, path: values, headers },
        ...codings.map((c) => ({ kind: "http", url, path: chart, headers: { ...headers, "accept-encoding": c } })),
        { kind: "h2grpc", url, path: "/meridian.timeseries.v1.TimeSeriesService/ReadChart", headers, request },
      ],
      REPS,
    );
    const grpc = charts.pop();
    const plain = charts[0];
    emit(`${label} whole-range JSON read (baseline)`, "time", spread(whole.rounds, 1000), "ms");
    codings.forEach((c, i) => {
      const r = charts[i];
      emit(`${label} chart width ${WIDTH}, JSON ${c}`, "time", spread(r.rounds, 1000), "ms", whole.seconds * 1000, roundRatio(r, whole));
      emit(`${label} chart width ${WIDTH}, JSON ${c}`, "bytes sent", r.bytes / 1e3, "KB", i === 0 ? whole.bytes / 1e3 : plain.bytes / 1e3);
    });
    emit(`${label} chart width ${WIDTH}, JSON identity`, "rows/s equivalent", n / plain.seconds / 1e6, "M rows/s", n / whole.seconds / 1e6);
    emit(
      `${label} chart width ${WIDTH}, gRPC columns`,
      "time",
      spread(grpc.rounds, 1000),
      "ms",
      whole.seconds * 1000,
      roundRatio(grpc, whole),
    );
    emit(`${label} chart width ${WIDTH}, gRPC columns`, "bytes sent", grpc.bytes / 1e3, "KB");
    emit(`${label} chart width ${WIDTH}, JSON, every coding`, "server time (request log: in to close)", spread(serverMs), "ms");
    // The client without a chart read: every row over the wire, parsed, M4 in TypeScript (a large heap for 10M parsed rows).
    const [ts] = await clientRounds([{ kind: "m4", url, path: values, headers, width: WIDTH, numeric: [true, false] }], Math.min(REPS, 3), [
      "--max-old-space-size=16384",
    ]);
    emit(`${label} whole-range JSON + M4 in TypeScript (client)`, "time", spread(ts.rounds, 1000), "ms");
    emit(`${label} chart width ${WIDTH}, JSON identity vs TypeScript M4`, "time", spread(plain.rounds, 1000), "ms", ts.seconds * 1000);
    if (ts.bytes !== (await rowCount(chart)))
      throw new Error(`the TypeScript M4 keeps ${ts.bytes} rows, the chart read answers ${await rowCount(chart)}`);
  }
} finally {
  server.process.kill();
  rmSync(dir, { recursive: true, force: true });
}

async function rowCount(path) {
  const r = await fetch(url + path, { headers });
  return (await r.json()).data.length;
}
