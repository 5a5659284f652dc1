// D52, D8, D6: the JSON the REST and Connect faces take and give. A byte-order
// mark before a JSON body is accepted; no error names an internal protobuf
// type; a data field carries `flags` only when it is a Flag field.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { TS_RW, tsApi, tsHeaders } from "../helpers/timeseries.js";

let server: TestServer;
let writer: string;
let tsKey: string;
let ds: string;

const BOM = "\uFEFF";
const message = {
  type: "Warning",
  title: "Maintenance",
  body: "tonight",
  startDate: "2026-01-01T00:00:00Z",
  expiringDate: "2030-01-01T00:00:00Z",
};

beforeAll(async () => {
  server = await startTestServer();
  writer = await server.key({ clientId: "writer", scopes: ["platform_iam_featurestatus_readwrite"], roles: ["BackOffice"] });
  tsKey = await server.key(TS_RW);
  ds = await tsApi(server, tsKey).dataset();
});
afterAll(() => server.close());

const post = (path: string, body: string, headers: Record<string, string>) =>
  fetch(server.url + path, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
const connect = (method: string, body: string, headers: Record<string, string>) =>
  post(`/${method}`, body, { "connect-protocol-version": "1", ...headers });

describe("D52 a UTF-8 byte-order mark before a JSON body", () => {
  it("D52 is accepted over REST", async () => {
    const r = await post("/api/admin/feature/message", BOM + JSON.stringify(message), { "svc-open-api-key": writer });
    expect(r.status).toBe(201);
    expect((await r.json()).title).toBe("Maintenance");
  });

  it("D52 is accepted over Connect", async () => {
    const r = await connect("meridian.featurestatus.v1.FeatureStatusService/CreateGlobalMessage", BOM + JSON.stringify({ message }), {
      "svc-open-api-key": writer,
    });
    expect(r.status).toBe(200);
    expect((await r.json()).title).toBe("Maintenance");
  });
});

describe("D8 errors never name internal protobuf types", () => {
  const restBodies = [
    "[]",
    '"text"',
    "5",
    "null",
    '{"title": 5}',
    '{"title": {}}',
    '{"type": []}',
    '{"startDate": 5}',
    '{"title": "a", "body": [1]}',
    "{",
    '{"title": "\\ud800"',
  ];
  const connectBodies = [
    "[]",
    '"text"',
    "5",
    '{"message": 5}',
    '{"message": []}',
    '{"message": {"title": 5}}',
    '{"message": {"title": []}}',
    '{"message": {"title": "a"}, "message": {}}',
    "{",
    '{"message": {"startDate": {"a": 1}}}',
  ];
  const tsBodies: [string, string][] = [
    ["/api/ts/dataset", '{"metadata": 5}'],
    ["/api/ts/dataset", '{"items": 5}'],
    ["/api/ts/dataset", '{"items": [5]}'],
    ["/api/ts/dataset", '{"timeSeriesProperties": [{"name": []}]}'],
    ["/api/ts/dataset/DS/timeseries/query", '{"conditions": 5}'],
    ["/api/ts/dataset/DS/timeseries/query", '{"conditions": [{"value": {}}]}'],
    ["/api/ts/dataset/DS/timeseries", '{"item": 5}'],
    ["/api/ts/dataset/DS/timeseries", '{"properties": {"depth": "x"}}'],
    ["/api/ts/dataset/DS/timeseries", '{"dataFields": [{"flags": 5}]}'],
  ];

  it.each(restBodies)("D8 a malformed REST message body %s is a 400 problem naming no internal type", async (body) => {
    const r = await post("/api/admin/feature/message", body, { "svc-open-api-key": writer });
    const text = await r.text();
    expect(r.status, text).toBe(400);
    expect(JSON.parse(text).code).toBe("invalid_argument");
    expect(text).not.toMatch(/meridian\.|google\.protobuf/);
  });

  it.each(connectBodies)("D8 a malformed Connect body %s is invalid_argument naming no internal type", async (body) => {
    const r = await connect("meridian.featurestatus.v1.FeatureStatusService/CreateGlobalMessage", body, { "svc-open-api-key": writer });
    const text = await r.text();
    expect(r.status, text).toBe(400);
    expect(JSON.parse(text).code).toBe("invalid_argument");
    expect(text).not.toMatch(/meridian\.|google\.protobuf/);
  });

  it.each(tsBodies)("D8 a malformed time series body to %s (%s) is a 400 naming no internal type", async (path, body) => {
    const r = await post(path.replace("DS", ds), body, { ...tsHeaders(tsKey, path.includes("DS") ? ds : undefined) });
    const text = await r.text();
    expect(r.status, text).toBe(400);
    expect(text).not.toMatch(/meridian\.|google\.protobuf/);
  });

  it("D8 a field-level error names the field as the caller spells it", async () => {
    const r = await post("/api/admin/feature/message", '{"title": 5}', { "svc-open-api-key": writer });
    expect((await r.json()).errors).toEqual({ title: [expect.any(String)] });
  });
});

describe("D52 flags only on Flag fields", () => {
  const dataFields = [
    { name: "value", dataType: "Single" },
    { name: "quality", dataType: "Flag" },
    { name: "flag", dataType: "Flag", flags: [{ id: 1, name: "suspect", level: 2 }] },
  ];
  const expectShape = (fields: Record<string, unknown>[]) => {
    expect(fields).toHaveLength(3);
    expect("flags" in fields[0]).toBe(false);
    expect(fields[0]).toEqual({ name: "value", dataType: "Single" });
    expect(fields[1]).toEqual({ name: "quality", dataType: "Flag", flags: [] });
    expect(fields[2]).toEqual({ name: "flag", dataType: "Flag", flags: [{ id: 1, name: "suspect", level: 2 }] });
  };

  it("D52 create, get, list and query answers carry flags on Flag fields only", async () => {
    const api = tsApi(server, tsKey);
    const created = await api.call("POST", `/api/ts/dataset/${ds}/timeseries`, { item: { name: "Level", dataType: "Single" }, dataFields });
    expect(created.status).toBe(201);
    expectShape(created.json.dataFields);
    const id = created.json.id;
    const got = await api.call("GET", `/api/ts/dataset/${ds}/timeseries/${id}`);
    expectShape(got.json.dataFields);
    const listed = await api.call("GET", `/api/ts/dataset/${ds}/timeseries/list`);
    expectShape(listed.json.data.find((t: { id: string }) => t.id === id).dataFields);
    const queried = await api.call("POST", `/api/ts/dataset/${ds}/timeseries/query`, {
      conditions: [{ type: "AttributeQueryCondition", name: "Item", operator: "Equal", value: "Level" }],
    });
    expect(queried.status).toBe(200);
    expectShape(queried.json.data.find((t: { id: string }) => t.id === id).dataFields);
  });
});
