// D30 writing through REST on the real server, with D14 access, D23 ids and
// D24 timestamps; stored values are checked in the database's blocks.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROJECT, TS_RW, storedRows as rowsInBlocks, tsApi } from "../helpers/timeseries.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

let server: TestServer;
let api: ReturnType<typeof tsApi>;
beforeAll(async () => {
  server = await startTestServer();
  api = tsApi(server, await server.key(TS_RW));
});
afterAll(() => server.close());

/** The stored rows of a series, with ISO timestamps. */
async function storedRows(seriesId: string): Promise<unknown[][]> {
  return (await rowsInBlocks(server, seriesId)).map(([t, ...cells]) => [new Date(t! * 1000).toISOString().slice(0, 19), ...cells]);
}

describe("D30 datasets and time series", () => {
  it("D30 POST /api/ts/dataset creates a dataset (201) in the caller's project; GET shows it; DELETE removes it with its series", async () => {
    const id = await api.dataset({
      items: [{ name: "Level", unit: "m", item: "level", dataType: "Single", timeSeriesType: "Instantaneous" }],
      metadata: { owner: "hydro" },
    });
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const got = await api.call("GET", `/api/ts/dataset/${id}`);
    expect(got.status).toBe(200);
    expect(got.json).toMatchObject({
      id,
      items: [{ name: "Level", unit: "m" }],
      timeSeriesProperties: [{ name: "depth", dataType: "Double" }],
      metadata: { owner: "hydro" },
    });
    const ts = await api.series(id);
    expect((await api.call("GET", `/api/ts/dataset/${id}/timeseries/${ts}`)).json).toMatchObject({
      id: ts,
      properties: { depth: 2.5 },
      dataFields: [{ name: "value" }, { name: "flag", flags: [{ id: 1, name: "suspect", level: 2 }] }],
    });
    expect((await api.call("GET", `/api/ts/dataset/${id}/timeseries/list`)).json.data.map((s: { id: string }) => s.id)).toEqual([ts]);
    expect((await api.call("DELETE", `/api/ts/dataset/${id}`)).status).toBe(204);
    expect((await api.call("GET", `/api/ts/dataset/${id}`)).status).toBe(404);
    expect(await server.query("SELECT count(*) AS n FROM time_series WHERE id = $1", ts)).toEqual([{ n: 0 }]);
  });

  it("D23 a given id is accepted in any case and returned lower case; a malformed one is a 400; a taken one a 409", async () => {
    const id = "ABCDEF01-2345-6789-ABCD-EF0123456789";
    expect(await api.dataset({ id })).toBe(id.toLowerCase());
    expect((await api.call("POST", "/api/ts/dataset", { id: "not-a-guid" })).status).toBe(400);
    expect((await api.call("POST", "/api/ts/dataset", { id })).status).toBe(409);
    expect((await api.call("GET", "/api/ts/dataset/not-a-guid")).status).toBe(400);
  });

  it("D30 a time series needs data fields of known types, and properties the dataset declares", async () => {
    const d = await api.dataset();
    for (const body of [
      { dataFields: [] },
      { dataFields: [{ name: "v", dataType: "Text" }] },
      { properties: { undeclared: 1 } },
      {
        dataFields: [
          { name: "v", dataType: "Single" },
          { name: "v", dataType: "Flag" },
        ],
      },
    ]) {
      const r = await api.call("POST", `/api/ts/dataset/${d}/timeseries`, {
        item: { name: "x" },
        dataFields: [{ name: "v", dataType: "Single" }],
        ...body,
      });
      expect(r.status, JSON.stringify(body)).toBe(400);
    }
  });

  it("D14 headers: wrong service, missing project, dataset header unlike the path are 400; another project is 403; its dataset is 404", async () => {
    const d = await api.dataset();
    expect((await api.call("GET", `/api/ts/dataset/${d}`, undefined, { "svc-service-id": "other" })).status).toBe(400);
    expect(
      (await api.call("GET", `/api/ts/dataset/${d}`, undefined, { "svc-dataset-id": "00000000-0000-0000-0000-000000000000" })).status,
    ).toBe(400);
    expect((await api.call("GET", `/api/ts/dataset/${d}`, undefined, { "svc-project-id": "" })).status).toBe(400);
    expect((await api.call("GET", `/api/ts/dataset/${d}`, undefined, { "svc-project-id": "proj-b" })).status).toBe(403);
    const both = tsApi(server, await server.key({ scopes: ["platform_timeseries_readwrite"], projects: [PROJECT, "proj-b"] }), "proj-b");
    expect((await both.call("GET", `/api/ts/dataset/${d}`)).status).toBe(404);
    const reader = tsApi(server, await server.key({ scopes: ["platform_timeseries_read"], projects: [PROJECT] }));
    expect((await reader.call("GET", `/api/ts/dataset/${d}`)).status).toBe(200);
    expect((await reader.call("DELETE", `/api/ts/dataset/${d}`)).status).toBe(403);
  });
});

describe("D30 values", () => {
  it("D30 upload upserts by timestamp (the later row of a duplicate wins), answers {count}, and null is a missing value", async () => {
    const d = await api.dataset();
    const ts = await api.series(d);
    const path = `/api/ts/dataset/${d}/timeseries/${ts}/values`;
    const first = await api.call("POST", path, {
      data: [
        ["2000-01-01T00:00:00", 12.345, 0],
        ["2000-01-01T00:01:00", 12.5, null],
        ["2000-01-01T00:02:00", null, 3],
      ],
    });
    expect(first).toEqual({ status: 200, json: { count: 3 } });
    await api.call("POST", path, {
      data: [
        ["2000-01-01T00:01:00", 1.25, 1],
        ["2000-01-01T00:01:00", 2.5, 2],
        ["1999-12-31T23:59:00", 0.5, 0],
      ],
    });
    expect(await storedRows(ts)).toEqual([
      ["1999-12-31T23:59:00", 0.5, 0],
      ["2000-01-01T00:00:00", Math.fround(12.345), 0],
      ["2000-01-01T00:01:00", 2.5, 2],
      ["2000-01-01T00:02:00", null, 3],
    ]);
  });

  it("D30 a bad row is a 400 naming it, and nothing of that upload is stored", async () => {
    const d = await api.dataset();
    const ts = await api.series(d);
    const path = `/api/ts/dataset/${d}/timeseries/${ts}/values`;
    for (const [row, field] of [
      [["2000-01-01T00:00:00", 1], "data[1]"],
      [["2000-13-01T00:00:00", 1, 0], "data[1][0]"],
      [["10000-01-01T00:00:00", 1, 0], "data[1][0]"],
      [["2000-01-01T00:00:00", "1", 0], "data[1][1]"],
      [["2000-01-01T00:00:00", 1e39, 0], "data[1][1]"],
      [["2000-01-01T00:00:00", 1, 1.5], "data[1][2]"],
    ] as const) {
      const r = await api.call("POST", path, { data: [["2000-01-01T00:00:00", 1, 0], row] });
      expect(r.status, JSON.stringify(row)).toBe(400);
      expect(Object.keys(r.json.errors)).toContain(field);
    }
    expect(await storedRows(ts)).toEqual([]);
  });

  it("D30 DELETE .../values?from=&to= removes the range, both ends inclusive (204); from after to is a 400", async () => {
    const d = await api.dataset();
    const ts = await api.series(d);
    const path = `/api/ts/dataset/${d}/timeseries/${ts}/values`;
    await api.call("POST", path, { data: [0, 1, 2, 3, 4].map((m) => [`2000-01-01T00:0${m}:00`, m, 0]) });
    expect((await api.call("DELETE", `${path}?from=2000-01-01T000100&to=2000-01-01T00:03:00Z`)).status).toBe(204);
    expect((await storedRows(ts)).map((r) => r[1])).toEqual([0, 4]);
    expect((await api.call("DELETE", `${path}?from=2000-01-02T000000&to=2000-01-01T000000`)).status).toBe(400);
    expect((await api.call("DELETE", `${path}?from=yesterday`)).status).toBe(400);
  });
});
