// The chart reads (D50) through a real server: REST (checked against the
// OpenAPI document by tsApi), gRPC through grpc-js and Connect; the answer
// is compared with M4 in plain TypeScript (test/helpers/m4.ts) over the
// whole-range read of the same series.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import * as grpc from "@grpc/grpc-js";
import { TimeSeriesService, type ValuesChunk } from "../../src/gen/meridian/timeseries/v1/time_series_pb.js";
import { m4, type M4Row } from "../helpers/m4.js";
import { storeRows, threeFieldSeries, THREE_KINDS } from "../helpers/columnar.js";
import { connectClient, grpcStream, hostPort } from "../helpers/clients.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { TS_RW, iso, makeRows, tsApi, tsHeaders } from "../helpers/timeseries.js";

type JsonRow = [string, ...(number | null)[]];
const seconds = (text: string) => Date.parse(text + "Z") / 1000;
/** JSON rows as M4 rows (epoch seconds first); NaN reads as null, which M4 skips alike. */
const asM4 = (rows: JsonRow[]): M4Row[] => rows.map(([t, ...cells]) => [seconds(t), ...cells] as M4Row);

describe("D50 chart reads", () => {
  let server: TestServer;
  let key: string;
  let api: ReturnType<typeof tsApi>;
  let d: string, w: string, empty: string;
  const rows = makeRows(70_000); // five blocks: the addon's two threads share them
  const chartPath = (series: string, query = "") => `/api/ts/dataset/${d}/timeseries/${series}/values/chart${query ? "?" + query : ""}`;
  const chart = async (series: string, query = "") => {
    const r = await api.call("GET", chartPath(series, query));
    expect(r.status).toBe(200);
    return r.json.data as JsonRow[];
  };
  const whole = async (series: string) => (await api.read(d, series)).json.data as JsonRow[];

  beforeAll(async () => {
    server = await startTestServer();
    key = await server.key(TS_RW);
    api = tsApi(server, key);
    d = await api.dataset();
    w = await api.series(d);
    empty = await api.series(d);
    await api.upload(d, w, rows);
  }, 60_000);
  afterAll(() => server.close());

  it("D50 GET .../values/chart answers { data: [row...] }: M4 of the whole series at width 1000, the rows of the values read", async () => {
    const all = await whole(w);
    const got = await chart(w);
    const first = seconds(rows[0][0]);
    const last = seconds(rows[rows.length - 1][0]);
    expect(asM4(got)).toEqual(m4(asM4(all), [true, false], first, last, 1000));
    expect(got.length).toBeGreaterThan(1000);
    expect(got.length).toBeLessThanOrEqual(4000);
    // Rows as stored, in time order without repeats.
    const stored = new Map(all.map((r) => [r[0], r]));
    for (const r of got) expect(stored.get(r[0])).toEqual(r);
    expect(new Set(got.map((r) => r[0])).size).toBe(got.length);
  });

  it("D50 width is clamped to 1..10000 and defaults to 1000, never an error", async () => {
    expect(await chart(w, "width=0")).toEqual(await chart(w, "width=1"));
    expect(await chart(w, "width=-7")).toEqual(await chart(w, "width=1"));
    expect(await chart(w, "width=10001")).toEqual(await chart(w, "width=10000"));
    expect(await chart(w, "width=99999999999")).toEqual(await chart(w, "width=10000"));
    expect(await chart(w)).toEqual(await chart(w, "width=1000"));
    // One bucket: the first and last rows and the extremes of the value.
    expect((await chart(w, "width=1")).length).toBeLessThanOrEqual(4);
  });

  it("D50 from and to are inclusive in either D24 form; an end not sent is the series' own first or last timestamp", async () => {
    const all = asM4(await whole(w));
    const from = rows[1000][0];
    const to = rows[50_000][0];
    const basic = (t: string) => t.replace(/[-:]/g, "").replace(/^(\d{4})(\d\d)(\d\d)/, "$1-$2-$3");
    const first = all[0][0];
    const last = all[all.length - 1][0];
    expect(asM4(await chart(w, `from=${from}&to=${basic(to)}&width=300`))).toEqual(m4(all, [true, false], seconds(from), seconds(to), 300));
    expect(asM4(await chart(w, `from=${from}&width=300`))).toEqual(m4(all, [true, false], seconds(from), last, 300));
    expect(asM4(await chart(w, `to=${to}&width=300`))).toEqual(m4(all, [true, false], first, seconds(to), 300));
    // A range beyond the series' rows, and a series without rows, answer no rows.
    expect(await chart(w, "from=2100-01-01T00:00:00")).toEqual([]);
    expect(await chart(empty)).toEqual([]);
  });

  it("D50 for random series (gaps, missing values, NaN, equal values, one row, rows on bucket edges), ranges and widths: the rows of M4", async () => {
    const kinds = THREE_KINDS;
    const { id, sid } = await threeFieldSeries(server, api, d);
    const cell = fc.oneof(
      fc.constant(null),
      fc.constant(NaN),
      fc.constantFrom(-1, 0, 2),
      fc.integer({ min: -9999, max: 9999 }).map((n) => n / 100),
    );
    const seriesArb = fc.integer({ min: 1, max: 300 }).chain((n) =>
      fc.record({
        start: fc.integer({ min: 1_600_000_000, max: 1_700_000_000 }),
        gaps: fc.array(fc.oneof(fc.constant(1), fc.constant(60), fc.integer({ min: 1, max: 100_000 })), {
          minLength: n - 1,
          maxLength: n - 1,
        }),
        cells: fc.array(fc.tuple(cell, cell, fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 300 }))), {
          minLength: n,
          maxLength: n,
        }),
      }),
    );
    await fc.assert(
      fc.asyncProperty(
        seriesArb,
        fc.integer({ min: 0, max: 299 }),
        fc.integer({ min: 0, max: 299 }),
        fc.integer({ min: 1, max: 60 }),
        fc.boolean(),
        async (s, i, j, width, edges) => {
          // Stored through the block store: NaN cannot come through an upload (D25), but may be in a block.
          const n = s.cells.length;
          const timestamps = new Float64Array(n);
          s.gaps.forEach((g, k) => (timestamps[k + 1] = timestamps[k] + g));
          timestamps.forEach((_, k) => (timestamps[k] += s.start));
          await storeRows(server, sid, kinds, timestamps, s.cells);
          const all = asM4(await whole(id));
          let from = timestamps[Math.min(i, n - 1)];
          let to = timestamps[Math.min(j, n - 1)];
          if (from > to) [from, to] = [to, from];
          // Bucket edges on rows: with to - from + 1 a multiple of width, every row of a regular run may open a bucket.
          if (edges) to = from + width * Math.max(1, Math.ceil((to - from + 1) / width)) - 1;
          const got = asM4(await chart(id, `from=${iso(from)}&to=${iso(to)}&width=${width}`));
          expect(got).toEqual(m4(all, [true, true, false], from, to, width));
        },
      ),
      { numRuns: 30 },
    );
  }, 120_000);

  it("D65 a long series whose buckets hold whole blocks (summaries) and whose edges cut others: the rows of M4, and after an upload the new rows (hot blocks dropped)", async () => {
    const long = await api.series(d);
    const many = makeRows(200_000); // thirteen blocks
    await api.upload(d, long, many);
    const first = seconds(many[0][0]);
    const last = seconds(many[many.length - 1][0]);
    const check = async () => {
      const all = asM4(await whole(long));
      for (const width of [1, 2, 3, 5, 13, 40, 1000]) {
        const query = `from=${iso(first)}&to=${iso(last)}&width=${width}`;
        expect(asM4(await chart(long, query))).toEqual(m4(all, [true, false], first, last, width));
        expect(asM4(await chart(long, query))).toEqual(m4(all, [true, false], first, last, width)); // again, from memory
      }
    };
    await check();
    // A new maximum and minimum inside blocks that the widths above take by their summaries.
    const edited = [many[77_777], many[150_001]].map((r, k) => [r[0], k === 0 ? 1e6 : -1e6, 1]);
    await api.upload(d, long, edited);
    const got = asM4(await chart(long, `from=${iso(first)}&to=${iso(last)}&width=1`));
    expect(got.map((r) => r[1])).toContain(1e6);
    expect(got.map((r) => r[1])).toContain(-1e6);
    await check();
  }, 120_000);

  it("D50 POST .../timeseries/values/chart answers one row array per id in the order asked, each as its own chart; id list errors as D26", async () => {
    const path = `/api/ts/dataset/${d}/timeseries/values/chart?width=200`;
    const r = await api.call("POST", path, [empty, w]);
    expect(r.status).toBe(200);
    expect(r.json.data).toEqual([[], await chart(w, "width=200")]);
    expect((await api.call("POST", path, [])).status).toBe(400);
    expect((await api.call("POST", path, [w, w])).status).toBe(400);
    const unknown = await api.call("POST", path, [w, "00000000-0000-0000-0000-0000000000ff"]);
    expect(unknown.status).toBe(404);
    expect(unknown.json.detail).toContain("00000000-0000-0000-0000-0000000000ff");
  });

  it("D50 errors as the values read: a bad or reversed range 400, an unknown series 404, no key 401, another project's dataset 403", async () => {
    expect((await api.call("GET", chartPath(w, "from=yesterday"))).status).toBe(400);
    expect((await api.call("GET", chartPath(w, `from=${rows[10][0]}&to=${rows[5][0]}`))).status).toBe(400);
    expect((await api.call("GET", chartPath("00000000-0000-0000-0000-0000000000ff"))).status).toBe(404);
    expect(
      (await fetch(server.url + chartPath(w), { headers: { "svc-service-id": "timeseries", "svc-project-id": "proj-a" } })).status,
    ).toBe(401);
    expect((await tsApi(server, key, "proj-b").call("GET", chartPath(w))).status).toBe(403);
  });

  it("D50 ReadChart and ReadManyChart answer the same rows as columns, through grpc-js and Connect", async () => {
    const rest = await chart(w, "width=500");
    const asRows = (chunks: ValuesChunk[]) =>
      chunks.flatMap((c) => c.timestamps.map((t, i) => [iso(Number(t)), c.columns[0].singles[i], c.columns[1].flags[i]]));
    const md = tsHeaders(key, d);
    const g = await grpcStream(
      hostPort(server.url),
      TimeSeriesService.method.readChart,
      { datasetId: d, timeSeriesId: w, width: 500n },
      md,
    );
    expect(g.error).toBeUndefined();
    expect(g.messages.every((c) => c.timeSeriesId === w)).toBe(true);
    expect(asRows(g.messages)).toEqual(rest.map(([t, v, f]) => [t, Math.fround(v as number), f]));
    const many = await grpcStream(
      hostPort(server.url),
      TimeSeriesService.method.readManyChart,
      { datasetId: d, timeSeriesIds: [empty, w], width: 500n },
      md,
    );
    expect(many.messages.map((c) => c.timeSeriesId)).toEqual([empty, w]);
    expect(asRows(many.messages.slice(1))).toEqual(asRows(g.messages));
    const unknown = await grpcStream(
      hostPort(server.url),
      TimeSeriesService.method.readChart,
      { datasetId: d, timeSeriesId: "00000000-0000-0000-0000-0000000000ff" },
      md,
    );
    expect(unknown.error?.code).toBe(grpc.status.NOT_FOUND);
    const connect = connectClient(TimeSeriesService, server.url);
    const chunks: ValuesChunk[] = [];
    for await (const c of connect.readChart({ datasetId: d, timeSeriesId: w, width: 500n }, { headers: md })) chunks.push(c);
    expect(asRows(chunks)).toEqual(asRows(g.messages));
  });
});
