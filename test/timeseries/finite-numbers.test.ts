// D52 numbers in series properties and dataset metadata are finite: NaN and
// ±Infinity are a 400 with nothing stored, through REST JSON and protobuf
// binary (grpc-js), and a row stored with one before the rule still reads.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as grpc from "@grpc/grpc-js";
import { TimeSeriesService } from "../../src/gen/meridian/timeseries/v1/time_series_pb.js";
import { grpcUnary, hostPort } from "../helpers/clients.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { TS_RW, tsApi, tsHeaders } from "../helpers/timeseries.js";

let server: TestServer;
let key: string;
let api: ReturnType<typeof tsApi>;
beforeAll(async () => {
  server = await startTestServer();
  key = await server.key(TS_RW);
  api = tsApi(server, key);
});
afterAll(() => server.close());

const count = async (table: string) => (await server.query<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))[0].n;
const dataFields = [{ name: "value", dataType: "Single" }];

describe("D52 non-finite numbers are refused", () => {
  it("D52 a NaN or ±Infinity property is a 400 naming it and nothing is stored (REST JSON)", async () => {
    const d = await api.dataset();
    const before = await count("time_series");
    for (const depth of ["NaN", "Infinity", "-Infinity"]) {
      const r = await api.call("POST", `/api/ts/dataset/${d}/timeseries`, { item: { name: "x" }, properties: { depth }, dataFields });
      expect([r.status, Object.keys(r.json.errors)], depth).toEqual([400, ["properties.depth"]]);
      expect(r.json.errors["properties.depth"][0]).toMatch(/finite/);
    }
    expect(await count("time_series")).toBe(before);
    expect((await api.call("GET", `/api/ts/dataset/${d}/timeseries/list`)).json).toEqual({ data: [] });
  });

  it("D52 a NaN or ±Infinity property is INVALID_ARGUMENT and nothing is stored (protobuf binary)", async () => {
    const d = await api.dataset();
    const before = await count("time_series");
    for (const depth of [NaN, Infinity, -Infinity]) {
      const r = await grpcUnary(
        hostPort(server.url),
        TimeSeriesService.method.createTimeSeries,
        { datasetId: d, timeSeries: { item: { name: "x" }, properties: { depth }, dataFields } },
        tsHeaders(key, d),
      );
      expect(r.error?.code, String(depth)).toBe(grpc.status.INVALID_ARGUMENT);
      expect(r.error?.details).toContain("properties.depth");
    }
    expect(await count("time_series")).toBe(before);
  });

  it("D52 NaN or ±Infinity anywhere in a dataset's metadata is INVALID_ARGUMENT naming its path and nothing is stored (protobuf binary)", async () => {
    const before = await count("datasets");
    const cases: [Record<string, unknown>, string][] = [
      [{ depth: NaN }, "metadata.depth"],
      [{ a: { b: Infinity } }, "metadata.a.b"],
      [{ list: [1, "x", -Infinity] }, "metadata.list[2]"],
    ];
    for (const [metadata, path] of cases) {
      const r = await grpcUnary(
        hostPort(server.url),
        TimeSeriesService.method.createDataset,
        { dataset: { metadata: metadata as never } },
        tsHeaders(key),
      );
      expect(r.error?.code, path).toBe(grpc.status.INVALID_ARGUMENT);
      expect(r.error?.details).toContain(path);
    }
    expect(await count("datasets")).toBe(before);
    // Finite numbers pass the same way.
    const ok = await grpcUnary(
      hostPort(server.url),
      TimeSeriesService.method.createDataset,
      { dataset: { metadata: { depth: 1.5, a: { b: [2] } } } },
      tsHeaders(key),
    );
    expect(ok.error).toBeUndefined();
    expect(ok.response?.metadata).toEqual({ depth: 1.5, a: { b: [2] } });
  });
});

describe("D52 reading never fails on a stored row", () => {
  it("D52 a series stored with a non-finite property (kept as null) reads through get, list and query, without that property", async () => {
    const d = await api.dataset();
    const good = await api.series(d, { item: { name: "good" }, properties: { depth: 1 } });
    const bad = await api.series(d, { item: { name: "bad" }, properties: { depth: 2 } });
    // What the server stored before D52 for {"depth":"NaN"}: JSON.stringify writes NaN as null.
    await server.query("UPDATE time_series SET properties = $1 WHERE id = $2", JSON.stringify({ depth: NaN }), bad);
    const one = await api.call("GET", `/api/ts/dataset/${d}/timeseries/${bad}`);
    expect([one.status, one.json.id, one.json.properties]).toEqual([200, bad, {}]);
    const list = await api.call("GET", `/api/ts/dataset/${d}/timeseries/list`);
    expect([list.status, list.json.data.map((s: { id: string }) => s.id).sort()]).toEqual([200, [bad, good].sort()]);
    const cond = (operator: string, value: string) => ({
      conditions: [{ type: "AttributeQueryCondition", name: "depth", operator, value }],
    });
    // A series without the property matches no condition on it (D29), null included.
    for (const [operator, value] of [
      ["LessThan", "5"],
      ["Equal", "0"],
      ["NotEqual", "7"],
    ]) {
      const q = await api.call("POST", `/api/ts/dataset/${d}/timeseries/query`, cond(operator, value));
      expect([q.status, q.json.data.map((s: { id: string }) => s.id)], operator).toEqual([200, operator === "Equal" ? [] : [good]]);
    }
  });
});
