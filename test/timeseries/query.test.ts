// D29 query conditions through REST: Item as text, declared properties as
// numbers, AND, every operator, and the 400s.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { TS_RW, tsApi } from "../helpers/timeseries.js";

let server: TestServer;
let api: ReturnType<typeof tsApi>;
let dataset: string;
const ids: Record<string, string> = {};

beforeAll(async () => {
  server = await startTestServer();
  api = tsApi(server, await server.key(TS_RW));
  dataset = await api.dataset({
    timeSeriesProperties: [
      { name: "depth", dataType: "Double" },
      { name: "station", dataType: "Double" },
    ],
  });
  for (const [name, depth] of [
    ["Level north", 1],
    ["Level south", 2.5],
    ["Flow", 4],
  ] as const) {
    ids[name] = await api.series(dataset, { item: { name }, properties: { depth, station: 7 } });
  }
  ids.bare = await api.series(dataset, { item: { name: "Bare" }, properties: {} });
});
afterAll(() => server.close());

const query = (...conditions: Record<string, string>[]) => api.call("POST", `/api/ts/dataset/${dataset}/timeseries/query`, { conditions });
const names = async (...conditions: Record<string, string>[]) => {
  const r = await query(...conditions);
  expect(r.status).toBe(200);
  return (r.json.data as { item: { name: string } }[]).map((s) => s.item.name).sort();
};
const cond = (name: string, operator: string, value: string) => ({ type: "AttributeQueryCondition", name, operator, value });

describe("D29 query conditions", () => {
  it("D29 Equal on Item compares the item name", async () => {
    expect(await names(cond("Item", "Equal", "Flow"))).toEqual(["Flow"]);
  });

  it("D29 every operator on Item (text) and on a declared property (numbers)", async () => {
    expect(await names(cond("Item", "NotEqual", "Flow"))).toEqual(["Bare", "Level north", "Level south"]);
    expect(await names(cond("Item", "Contains", "south"))).toEqual(["Level south"]);
    expect(await names(cond("Item", "StartsWith", "Level"))).toEqual(["Level north", "Level south"]);
    expect(await names(cond("depth", "Equal", "2.5"))).toEqual(["Level south"]);
    expect(await names(cond("depth", "NotEqual", "2.5"))).toEqual(["Flow", "Level north"]);
    expect(await names(cond("depth", "GreaterThan", "2.5"))).toEqual(["Flow"]);
    expect(await names(cond("depth", "GreaterThanOrEqual", "2.5"))).toEqual(["Flow", "Level south"]);
    expect(await names(cond("depth", "LessThan", "2.5"))).toEqual(["Level north"]);
    expect(await names(cond("depth", "LessThanOrEqual", "2.5"))).toEqual(["Level north", "Level south"]);
    // Numbers, not text: "10" > "4" as a number, not as a string.
    expect(await names(cond("depth", "LessThan", "10"))).toEqual(["Flow", "Level north", "Level south"]);
  });

  it("D29 conditions combine with AND; no conditions match every series", async () => {
    expect(await names(cond("Item", "StartsWith", "Level"), cond("depth", "GreaterThan", "1"))).toEqual(["Level south"]);
    expect(await names()).toEqual(["Bare", "Flow", "Level north", "Level south"]);
  });

  it("D29 an undeclared property, an unknown type or operator, a text operator on a property, a non-number value are 400", async () => {
    for (const c of [
      cond("colour", "Equal", "1"),
      { ...cond("Item", "Equal", "Flow"), type: "RangeCondition" },
      cond("Item", "Like", "Flow"),
      cond("depth", "Contains", "2"),
      cond("depth", "Equal", "deep"),
    ]) {
      const r = await query(c);
      expect(r.status, JSON.stringify(c)).toBe(400);
      expect(Object.keys(r.json.errors)[0]).toMatch(/^conditions\[0\]\./);
    }
  });
});
