// D68: one request carries rows for many series of a dataset (REST, Connect,
// and a gRPC client stream), all or nothing, each series' rows checked
// against its own fields.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as grpc from "@grpc/grpc-js";
import { TimeSeriesService } from "../../src/gen/meridian/timeseries/v1/time_series_pb.js";
import { connectClient, grpcClientStream, hostPort } from "../helpers/clients.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { TS_RW, makeRows, tsApi, tsHeaders } from "../helpers/timeseries.js";

let server: TestServer;
let key: string;
let api: ReturnType<typeof tsApi>;
let dataset: string;

beforeAll(async () => {
  server = await startTestServer();
  key = await server.key(TS_RW);
  api = tsApi(server, key);
  dataset = await api.dataset();
});
afterAll(() => server.close());

const upload = (body: unknown, ds = dataset) => api.call("POST", `/api/ts/dataset/${ds}/values`, body);
const rowsOf = async (id: string) => (await api.read(dataset, id)).json.data;
/** A series with only a Double field (another shape than the default's Single and Flag). */
const doubleSeries = () => api.series(dataset, { dataFields: [{ name: "level", dataType: "Double" }] });

describe("D68 many series in one write", () => {
  it("D68 one REST request stores the rows of every series it names, each in its own field layout", async () => {
    const [a, b] = await Promise.all([api.series(dataset), api.series(dataset)]);
    const c = await doubleSeries();
    const rows = makeRows(5);
    const r = await upload({
      series: [
        { timeSeriesId: a, data: rows },
        { timeSeriesId: b, data: rows.slice(0, 2) },
        { timeSeriesId: c, data: [[rows[0][0], 1.25]] },
      ],
    });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ count: 8, series: 3 });
    expect(await rowsOf(a)).toEqual(rows);
    expect(await rowsOf(b)).toEqual(rows.slice(0, 2));
    expect(await rowsOf(c)).toEqual([[rows[0][0], 1.25]]);
  });

  it("D68 one bad row in the middle of the request is a 400 naming it, and nothing of the request is stored", async () => {
    const [a, b] = await Promise.all([api.series(dataset), api.series(dataset)]);
    await api.upload(dataset, a, makeRows(3));
    const before = await rowsOf(a);
    const bad = makeRows(4, Date.UTC(2025, 0, 1) / 1000) as unknown[][];
    bad[2] = [bad[2][0], "high", 0];
    const r = await upload({
      series: [
        { timeSeriesId: a, data: makeRows(4, Date.UTC(2025, 0, 1) / 1000) },
        { timeSeriesId: b, data: bad },
      ],
    });
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.json.errors)).toContain("series[1].data[2][1]");
    expect(await rowsOf(a)).toEqual(before);
    expect(await rowsOf(b)).toEqual([]);
  });

  it("D68 each series' rows are checked against its own fields: a row shaped for another series is refused", async () => {
    const [a, c] = await Promise.all([api.series(dataset), doubleSeries()]);
    const row = makeRows(1)[0];
    const r = await upload({
      series: [
        { timeSeriesId: a, data: [row] },
        { timeSeriesId: c, data: [row] },
      ],
    });
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.json.errors)).toContain("series[1].data[0]");
    expect(await rowsOf(a)).toEqual([]);
  });

  it("D68 a series of another dataset is a 404 naming it, and nothing is stored", async () => {
    const other = await api.dataset();
    const foreign = await api.series(other);
    const a = await api.series(dataset);
    const r = await upload({
      series: [
        { timeSeriesId: a, data: makeRows(2) },
        { timeSeriesId: foreign, data: makeRows(2) },
      ],
    });
    expect(r.status).toBe(404);
    expect(r.json.detail).toContain(foreign);
    expect(await rowsOf(a)).toEqual([]);
  });

  it("D68 D51 more than 10,000 series entries in one request is a 400 before any lookup; nothing is stored", async () => {
    const a = await api.series(dataset);
    const entry = { timeSeriesId: a, data: [makeRows(1)[0]] };
    const r = await upload({ series: Array.from({ length: 10_001 }, () => entry) });
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.json.errors)).toContain("at most 10,000 series entries");
    expect(await rowsOf(a)).toEqual([]);
    expect((await upload({ series: Array.from({ length: 10_000 }, () => entry) })).json).toEqual({ count: 10_000, series: 1 });
  });

  it("D68 a malformed series id is a 400 naming its place", async () => {
    const r = await upload({ series: [{ timeSeriesId: "not-a-guid", data: makeRows(1) }] });
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.json.errors)).toContain("series[0].timeSeriesId");
  });

  it("D68 a series named twice gets its rows together; of equal timestamps the later wins (D30)", async () => {
    const a = await api.series(dataset);
    const [first, second] = makeRows(2);
    const r = await upload({
      series: [
        { timeSeriesId: a, data: [first, second] },
        { timeSeriesId: a, data: [[first[0], 99, 1]] },
      ],
    });
    expect(r.json).toEqual({ count: 3, series: 1 });
    expect(await rowsOf(a)).toEqual([[first[0], 99, 1], second]);
  });

  it("D68 D14 writing many series needs the write scope and the dataset's project", async () => {
    const reader = tsApi(server, await server.key({ scopes: ["platform_timeseries_read"], projects: ["proj-a"] }));
    const a = await api.series(dataset);
    const r = await reader.call("POST", `/api/ts/dataset/${dataset}/values`, { series: [{ timeSeriesId: a, data: makeRows(1) }] });
    expect(r.status).toBe(403);
    expect(await rowsOf(a)).toEqual([]);
  });

  it("D68 Connect callers write many series with the same method", async () => {
    const a = await api.series(dataset);
    const client = connectClient(TimeSeriesService, server.url);
    const answer = await client.uploadManyValues(
      { datasetId: dataset, series: [{ timeSeriesId: a, data: [] }] },
      { headers: tsHeaders(key, dataset) },
    );
    expect(answer.series).toBe(1);
  });
});

describe("D68 a gRPC client stream for collectors", () => {
  const stream = (messages: { series: { timeSeriesId: string; data: unknown[][] }[] }[]) =>
    grpcClientStream(
      hostPort(server.url),
      TimeSeriesService.method.uploadValuesStream,
      messages.map((m) => ({
        datasetId: dataset,
        series: m.series.map((s) => ({ timeSeriesId: s.timeSeriesId, data: s.data.map((row) => ({ values: row.map(cell) })) })),
      })),
      tsHeaders(key, dataset),
    );

  it("D68 every message of the stream is stored as it arrives; the answer counts them", async () => {
    const [a, b] = await Promise.all([api.series(dataset), api.series(dataset)]);
    const rows = makeRows(6);
    const r = await stream([
      { series: [{ timeSeriesId: a, data: rows.slice(0, 3) }] },
      {
        series: [
          { timeSeriesId: a, data: rows.slice(3) },
          { timeSeriesId: b, data: rows.slice(0, 1) },
        ],
      },
    ]);
    expect(r.error).toBeUndefined();
    expect(r.response?.count).toBe(7);
    expect(r.response?.series).toBe(2);
    expect(await rowsOf(a)).toEqual(rows);
  });

  it("D68 a bad message ends the stream with INVALID_ARGUMENT saying where; the messages before it stay stored", async () => {
    const a = await api.series(dataset);
    const rows = makeRows(3);
    const r = await stream([
      { series: [{ timeSeriesId: a, data: rows.slice(0, 1) }] },
      { series: [{ timeSeriesId: a, data: [[rows[1][0], "x", 0]] }] },
      { series: [{ timeSeriesId: a, data: rows.slice(2) }] },
    ]);
    expect(r.error?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(decodeURIComponent(r.error?.details ?? "")).toContain("message 1 of the stream failed (the 1 before it are stored)");
    expect(await rowsOf(a)).toEqual(rows.slice(0, 1));
  });
});

/** A JSON cell as a protobuf Value. */
function cell(x: unknown) {
  if (x === null) return { kind: { case: "nullValue" as const, value: 0 } };
  if (typeof x === "number") return { kind: { case: "numberValue" as const, value: x } };
  return { kind: { case: "stringValue" as const, value: x as string } };
}
