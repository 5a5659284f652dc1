// Value reads through REST on the real server (spec Part B, D24-D28): whole
// range, one series and many, D25 cells, D26 id lists; api-version 3 paging
// in test/timeseries/paging.test.ts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { request } from "node:http";
import { TS_RW, iso, makeRows, tsApi, tsHeaders } from "../helpers/timeseries.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

let server: TestServer;
let api: ReturnType<typeof tsApi>;
let key: string;
beforeAll(async () => {
  server = await startTestServer();
  key = await server.key(TS_RW);
  api = tsApi(server, key);
});
afterAll(() => server.close());

describe("values, whole range", () => {
  it('GET .../values answers { data: [row...] } for the whole series, rows ["yyyy-MM-ddTHH:mm:ss", cells...] in time order', async () => {
    const d = await api.dataset();
    const s = await api.series(d);
    const rows = makeRows(40_000); // three blocks
    await api.upload(d, s, rows);
    const r = await api.read(d, s);
    expect(r.status).toBe(200);
    expect(Object.keys(r.json)).toEqual(["data"]);
    expect(r.json.data).toEqual(rows);
  });

  it("D25 a Single prints as the shortest decimal that reads back as the same float32; Double likewise; Flag as its id; missing and NaN as null", async () => {
    const d = await api.dataset();
    const s = await api.series(d, {
      dataFields: [
        { name: "s", dataType: "Single" },
        { name: "d", dataType: "Double" },
        { name: "f", dataType: "Flag" },
      ],
    });
    const t = (i: number) => iso(1_700_000_000 + i);
    const singles = [12.345, 0.1, 1e-7, 3.4028234663852886e38, -0.5, 123456.7, 1e20, 16777217, 1.17549435e-38, 7];
    const doubles = [12.345, 0.1, 1e-300, Math.PI, -2.5e-308, 1234567.891, 1e21, 2 ** 53 + 2, Number.MIN_VALUE, -1.5];
    const rows: (string | number | null)[][] = singles.map((v, i) => [t(i), v, doubles[i], i]);
    rows.push([t(20), null, null, null]);
    await api.upload(d, s, rows);
    const text = await api.readText(d, s);
    expect(text).toContain('"2023-11-14T22:13:20",12.345,12.345,0]');
    expect(text).not.toContain("12.345000267028809");
    const data = JSON.parse(text).data as (string | number | null)[][];
    const cells = cellTexts(text);
    data.slice(0, singles.length).forEach(([, single, double, flag], i) => {
      expect(Math.fround(single as number)).toBe(Math.fround(singles[i]));
      expect(Object.is(double, doubles[i]) || double === doubles[i]).toBe(true);
      expect(flag).toBe(i);
      expectShortest(cells[i][0], Math.fround(singles[i]), Math.fround);
      // A Double prints exactly as JSON.stringify prints it.
      expect(cells[i][1]).toBe(JSON.stringify(doubles[i]));
    });
    expect(data[singles.length]).toEqual([t(20), null, null, null]);
  });

  it("D25 float32 values at random print shortest and read back exactly", async () => {
    const d = await api.dataset();
    const s = await api.series(d, { dataFields: [{ name: "s", dataType: "Single" }] });
    const bits = new Uint32Array(5000);
    const f32 = new Float32Array(bits.buffer);
    let x = 12345;
    for (let i = 0; i < bits.length; i++) {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      bits[i] = x;
      if (!Number.isFinite(f32[i])) f32[i] = 1.5;
    }
    // Half noise over all exponents, half short decimals (the writer's fast path).
    for (let i = 0; i < 2500; i++) f32[i] = Math.round((x = (Math.imul(x, 1103515245) + 12345) >>> 0) % 2_000_000) / 1000 - 1000;
    await api.upload(
      d,
      s,
      Array.from(f32, (v, i) => [iso(1_000_000 + i), v]),
    );
    const text = await api.readText(d, s);
    cellTexts(text).forEach(([v], i) => expectShortest(v, f32[i], Math.fround));
  });

  it("from and to are inclusive, in both D24 forms; either may be left out", async () => {
    const d = await api.dataset();
    const s = await api.series(d);
    const rows = makeRows(100, Date.UTC(2024, 0, 1) / 1000, 60);
    await api.upload(d, s, rows);
    const q = async (query: string) => (await api.read(d, s, query)).json.data;
    expect(await q("from=2024-01-01T001000&to=2024-01-01T002000")).toEqual(rows.slice(10, 21));
    expect(await q("from=2024-01-01T00:10:00Z&to=2024-01-01T00:20:00")).toEqual(rows.slice(10, 21));
    expect(await q("from=2024-01-01T013000")).toEqual(rows.slice(90));
    expect(await q("to=2024-01-01T000200")).toEqual(rows.slice(0, 3));
    expect(await q("from=2024-01-01T00:10:30&to=2024-01-01T00:10:59")).toEqual([]);
    expect(await q("from=2030-01-01T000000")).toEqual([]);
  });

  it("D24 a bad from or to, or from after to, is a 400 problem+json", async () => {
    const d = await api.dataset();
    const s = await api.series(d);
    for (const query of [
      "from=2024-13-01T000000",
      "to=yesterday",
      "from=2024-01-01T00:10",
      "from=2024-01-02T000000&to=2024-01-01T000000",
      "from=0000-12-31T235959",
    ]) {
      const r = await api.read(d, s, query);
      expect(r.status, query).toBe(400);
      expect(r.json.status).toBe(400);
    }
  });

  it("a series without values answers { data: [] }; an unknown series is a 404, another project's dataset a 403", async () => {
    const d = await api.dataset();
    const s = await api.series(d);
    expect((await api.read(d, s)).json).toEqual({ data: [] });
    expect((await api.read(d, "00000000-0000-0000-0000-000000000001")).status).toBe(404);
    expect((await api.read(d, "nope")).status).toBe(400);
    expect((await tsApi(server, key, "proj-b").read(d, s)).status).toBe(403);
  });

  it("D9 without api-version 3 limit and cursor are ignored and the whole range is returned", async () => {
    const d = await api.dataset();
    const s = await api.series(d);
    const rows = makeRows(20_000);
    await api.upload(d, s, rows);
    // A real cursor of this series, to show it is not followed without version 3.
    const cursor = encodeURIComponent((await api.read(d, s, "limit=16536", true)).json.cursor);
    for (const query of [
      "limit=16536",
      `cursor=${cursor}`,
      `limit=16536&cursor=${cursor}`,
      `from=${rows[0][0]}&cursor=${cursor}`,
      "cursor=abc%23def",
    ]) {
      const one = await api.read(d, s, query);
      expect([one.status, Object.keys(one.json)], query).toEqual([200, ["data"]]);
      expect(one.json.data, query).toEqual(rows);
      const many = await api.readMany(d, [s], query);
      expect([many.status, many.json], query).toEqual([200, { data: [rows] }]);
    }
  });
});

describe("D26 multi-series values, whole range", () => {
  it("D26 POST .../timeseries/values answers one row array per id, in request order, an empty series as []", async () => {
    const d = await api.dataset();
    const [a, b, c] = [await api.series(d), await api.series(d), await api.series(d)];
    const ra = makeRows(20_000, 1_600_000_000);
    const rc = makeRows(5, 1_600_000_000);
    await api.upload(d, a, ra);
    await api.upload(d, c, rc);
    const r = await api.readMany(d, [c, b, a.toUpperCase()]);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ data: [rc, [], ra] });
    const ranged = await api.readMany(d, [a, c], `from=${iso(1_600_000_000 + 60)}&to=${iso(1_600_000_000 + 180)}`);
    expect(ranged.json.data).toEqual([ra.slice(1, 4), rc.slice(1, 4)]);
  });

  it("D26 the id list must be a non-empty array of GUIDs without duplicates (400); an id not in the dataset is a 404 naming it", async () => {
    const d = await api.dataset();
    const a = await api.series(d);
    const other = await api.series(await api.dataset());
    for (const body of [[], [a, a], [a, a.toUpperCase()], ["not-a-guid"], [7], { ids: [a] }]) {
      const r = await api.readMany(d, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.json.status).toBe(400);
    }
    const r = await api.readMany(d, [a, other]);
    expect(r.status).toBe(404);
    expect(r.json.detail).toContain(other);
  });
});

describe("D28 whole-range reads stream", () => {
  it("D28 the response is sent in chunks as blocks are decoded, and a client that disconnects stops the read", async () => {
    const d = await api.dataset();
    const s = await api.series(d);
    await api.upload(d, s, makeRows(300_000));
    const full = Buffer.byteLength(JSON.stringify({ data: makeRows(300_000) }));
    // Read the first chunk only, then hang up.
    const firstChunk = await new Promise<number>((resolve, reject) => {
      const req = request(`${server.url}/api/ts/dataset/${d}/timeseries/${s}/values`, { headers: tsHeaders(key, d) }, (res) => {
        expect(res.headers["transfer-encoding"]).toBe("chunked");
        res.once("data", (chunk: Buffer) => {
          req.destroy();
          resolve(chunk.length);
        });
      });
      req.on("error", reject);
      req.end();
    });
    expect(firstChunk).toBeLessThan(full);
    const line = await waitFor(() =>
      server.logs.find((l) => l.msg === "request" && String(l.path).endsWith(`${s}/values`) && l.method === "GET"),
    );
    expect(line.completed).toBe(false);
    // The walk stopped with the socket: far from all of it was produced.
    expect(line.streamedBytes as number).toBeLessThan(full / 2);
    // And the server serves the same read in full afterwards.
    expect((await api.read(d, s)).json.data.length).toBe(300_000);
  });
});

/** The cells of each row as the server wrote them (after the timestamp). */
function cellTexts(text: string): string[][] {
  return [...text.matchAll(/\["[^"]*",([^\]]*)\]/g)].map((m) => m[1].split(","));
}

/** The text reads back as `value` (through `round`), and no decimal with one significant digit fewer does. */
function expectShortest(text: string, value: number, round: (x: number) => number): void {
  expect(round(Number(text)), text).toBe(value);
  const digits = text.replace(/^-/, "").replace(/e.*$/, "").replace(".", "").replace(/^0+/, "").replace(/0+$/, "").length;
  if (digits > 1) expect(round(Number(Number(text).toPrecision(digits - 1))), text).not.toBe(value);
}

async function waitFor<T>(find: () => T | undefined, ms = 5000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = find();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
}
