// api-version 3 paging of the two values endpoints through REST (spec,
// "Paged reading", its error table; D26, D27, D35), on the real server.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TS_RW, iso, makeRows, tsApi } from "../helpers/timeseries.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

type Row = [string, number | null, number | null];
type Api = ReturnType<typeof tsApi>;

const START = Date.UTC(2024, 0, 1) / 1000;
let server: TestServer;
let api: Api;
let d: string;
/** Series a: 120,000 rows; b: empty; c: 20,000 rows; e: 5 rows. */
let a: string, b: string, c: string, e: string;
const rows: Record<string, Row[]> = {};

beforeAll(async () => {
  server = await startTestServer();
  api = tsApi(server, await server.key(TS_RW));
  d = await api.dataset();
  [a, b, c, e] = [await api.series(d), await api.series(d), await api.series(d), await api.series(d)];
  rows[a] = makeRows(120_000, START);
  rows[b] = [];
  rows[c] = makeRows(20_000, START + 30);
  rows[e] = makeRows(5, START + 7);
  for (const s of [a, c, e]) await api.upload(d, s, rows[s]);
}, 60_000);
afterAll(() => server.close());

const q = (params: Record<string, string | number | undefined>) =>
  Object.entries(params)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`)
    .join("&");

interface Page<T> {
  data: T[];
  cursor?: string;
}

/** Every page of a paged read, following the cursors; `page` reads one (the first without a cursor). */
async function allPages<T>(page: (cursor: string | undefined) => Promise<{ status: number; json: Page<T> }>) {
  const pages: Page<T>[] = [];
  let cursor: string | undefined;
  do {
    const r = await page(cursor);
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    pages.push(r.json);
    cursor = r.json.cursor;
  } while (cursor);
  return pages;
}

/** Every page of a single-series read. */
const walkOne = (series: string, params: { from?: string; to?: string; limit?: number }, through: Api = api) =>
  allPages<Row>((cursor) => through.read(d, series, q(cursor ? { cursor, to: params.to, limit: params.limit } : params), true));

interface Entry {
  timeSeriesId: string;
  values: Row[];
}

const walkMany = (ids: string[], params: { from?: string; to?: string; limit?: number }) =>
  allPages<Entry>((cursor) => api.readMany(d, ids, q({ ...params, cursor }), true));

/** Pages joined back into one row list per series, in request order. */
function joined(pages: { data: Entry[] }[]): Map<string, Row[]> {
  const out = new Map<string, Row[]>();
  for (const p of pages) for (const en of p.data) out.set(en.timeSeriesId, [...(out.get(en.timeSeriesId) ?? []), ...en.values]);
  return out;
}

describe("paged reading, single series", () => {
  it("limit defaults to 100 000 values; the last page has no cursor", async () => {
    const pages = await walkOne(a, {});
    expect(pages.map((p) => p.data.length)).toEqual([100_000, 20_000]);
    expect(pages[0].cursor).toEqual(expect.any(String));
    expect("cursor" in pages[1]).toBe(false);
    expect(pages.flatMap((p) => p.data)).toEqual(rows[a]);
  });

  it("limit is clamped to 16 536 from below (never rejected), and D35 pages are full", async () => {
    for (const limit of [1, 0, -5, 16_535]) {
      const r = await api.read(d, a, q({ limit }), true);
      expect(r.status).toBe(200);
      expect(r.json.data.length, String(limit)).toBe(16_536);
    }
    expect((await walkOne(a, { limit: 50_000 })).map((p) => p.data.length)).toEqual([50_000, 50_000, 20_000]);
  });

  it("limit is clamped to 5 000 000 from above: a larger limit reads the series in one page", async () => {
    const pages = await walkOne(a, { limit: 2 ** 40 });
    expect(pages.map((p) => p.data.length)).toEqual([120_000]);
  });

  it("D35 a page holds exactly min(limit, values left), so a range that ends on a page boundary ends without an empty page", async () => {
    const to = rows[a][2 * 16_536 - 1][0];
    const pages = await walkOne(a, { to, limit: 16_536 });
    expect(pages.map((p) => p.data.length)).toEqual([16_536, 16_536]);
    expect(pages[1].cursor).toBeUndefined();
  });

  it("D27 the cursor contains '#'; URL-encoded it works, sent raw it is cut short and gets 400", async () => {
    const first = await api.read(d, a, "", true);
    const cursor: string = first.json.cursor;
    expect(cursor).toContain("#");
    expect((await api.read(d, a, `cursor=${encodeURIComponent(cursor)}`, true)).status).toBe(200);
    const raw = await api.read(d, a, `cursor=${cursor}`, true); // fetch drops everything from the '#'
    expect(raw.status).toBe(400);
    expect(raw.json.detail).toMatch(/cursor/);
  });

  it("spec error table: from sent with a cursor on the single-series endpoint is a 400", async () => {
    const { cursor } = (await api.read(d, a, "", true)).json;
    const r = await api.read(d, a, q({ cursor, from: iso(START) }), true);
    expect(r.status).toBe(400);
    expect(r.json.detail).toMatch(/from/);
  });

  it("to is not carried by the cursor: repeated it holds, left out the range widens to the end of the series", async () => {
    const to = rows[a][40_000][0];
    const first = (await api.read(d, a, q({ to, limit: 30_000 }), true)).json;
    const held = (await api.read(d, a, q({ cursor: first.cursor, to, limit: 30_000 }), true)).json;
    expect(held.data).toEqual(rows[a].slice(30_000, 40_001));
    expect(held.cursor).toBeUndefined();
    const widened = (await api.read(d, a, q({ cursor: first.cursor, limit: 30_000 }), true)).json;
    expect(widened.data).toEqual(rows[a].slice(30_000, 60_000));
    expect(widened.cursor).toEqual(expect.any(String));
  });

  it("limit applies per page and may differ between pages", async () => {
    const first = (await api.read(d, a, q({ limit: 20_000 }), true)).json;
    const second = (await api.read(d, a, q({ cursor: first.cursor, limit: 70_000 }), true)).json;
    expect(second.data).toEqual(rows[a].slice(20_000, 90_000));
  });

  it("D27 a tampered or truncated cursor is a 400, and so is one of another series or another dataset", async () => {
    const { cursor } = (await api.read(d, a, "", true)).json as { cursor: string };
    const [body, mac] = cursor.split("#");
    const flipped = body.slice(0, 5) + (body[5] === "A" ? "B" : "A") + body.slice(6);
    for (const bad of [`${flipped}#${mac}`, cursor.slice(0, -3), body, `${body}#`, "garbage", "#"]) {
      const r = await api.read(d, a, q({ cursor: bad }), true);
      expect(r.status, bad).toBe(400);
      expect(r.json.type ?? r.json.title).toBeDefined();
    }
    expect((await api.read(d, c, q({ cursor }), true)).json.detail).toMatch(/another time series/);
    const d2 = await api.dataset();
    const s2 = await api.series(d2);
    const other = await api.read(d2, s2, q({ cursor }), true);
    expect(other.status).toBe(400);
  });

  it("spec error table: a cursor issued by the other values endpoint is a 400, both ways", async () => {
    const single = (await api.read(d, a, "", true)).json.cursor;
    const multi = (await api.readMany(d, [a], "", true)).json.cursor;
    const r1 = await api.readMany(d, [a], q({ cursor: single }), true);
    const r2 = await api.read(d, a, q({ cursor: multi }), true);
    expect([r1.status, r2.status]).toEqual([400, 400]);
    expect(r1.json.detail).toMatch(/endpoint/);
    expect(r2.json.detail).toMatch(/endpoint/);
  });

  it("D27 reading resumes strictly after the last timestamp returned: a write between pages neither repeats nor skips a row that was there", async () => {
    const s = await api.series(d);
    const mine = makeRows(40_000, START);
    await api.upload(d, s, mine);
    const first = (await api.read(d, s, q({ limit: 16_536 }), true)).json;
    const last = first.data[16_535][0] as string;
    // A row before the page's end (already behind the reader) and one just after it.
    await api.upload(d, s, [
      [iso(Date.parse(last + "Z") / 1000 - 30), 1, 0],
      [iso(Date.parse(last + "Z") / 1000 + 30), 2, 0],
    ]);
    const second = (await api.read(d, s, q({ cursor: first.cursor, limit: 16_536 }), true)).json;
    expect(second.data[0]).toEqual([iso(Date.parse(last + "Z") / 1000 + 30), 2, 0]);
    expect(second.data[1]).toEqual(mine[16_536]);
  });

  it("D27 cursors survive a restart: the key is kept in the database", async () => {
    const dir = mkdtempSync(join(tmpdir(), "meridian-restart-"));
    const env = { MERIDIAN_DB: join(dir, "m.db") };
    try {
      const one = await startTestServer(env);
      const key = await one.key(TS_RW);
      const api1 = tsApi(one, key);
      const ds = await api1.dataset();
      const s = await api1.series(ds);
      await api1.upload(ds, s, makeRows(20_000));
      const first = (await api1.read(ds, s, q({ limit: 16_536 }), true)).json;
      expect(first.cursor).toEqual(expect.any(String));
      await one.close();
      const two = await startTestServer(env);
      const again = await tsApi(two, key).read(ds, s, q({ cursor: first.cursor }), true);
      await two.close();
      expect(again.status).toBe(200);
      expect(again.json.data.length).toBe(20_000 - 16_536);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("paged reading, multiple series (D26)", () => {
  it("D26 limit bounds the values over all series; a page ends mid-series and that series opens the next page; an empty series has its entry", async () => {
    const pages = await walkMany([e, b, c, a], { limit: 16_536 });
    expect(pages[0].data.map((en) => [en.timeSeriesId, en.values.length])).toEqual([
      [e, 5],
      [b, 0],
      [c, 16_531],
    ]);
    expect(pages[1].data.map((en) => [en.timeSeriesId, en.values.length])).toEqual([
      [c, 20_000 - 16_531],
      [a, 16_536 - (20_000 - 16_531)],
    ]);
    expect(pages.slice(0, -1).every((p) => p.data.reduce((n, en) => n + en.values.length, 0) === 16_536)).toBe(true);
    const all = joined(pages);
    expect([...all.keys()]).toEqual([e, b, c, a]);
    for (const s of [a, b, c, e]) expect(all.get(s)).toEqual(rows[s]);
  });

  it("D26 from stays effective on continuation for series not begun; the series being resumed uses the cursor's time", async () => {
    const from = iso(START + 600_000);
    const pages = await walkMany([c, a], { from, limit: 16_536 });
    const all = joined(pages);
    expect(all.get(c)).toEqual(rows[c].filter((r) => r[0] >= from));
    expect(all.get(a)).toEqual(rows[a].filter((r) => r[0] >= from));
  });

  it("spec error table: an id list unlike the cursor's, in content or order, is a 400", async () => {
    const { cursor } = (await api.readMany(d, [e, c, a], q({ limit: 16_536 }), true)).json;
    for (const ids of [
      [e, a, c],
      [e, c, a, b],
      [e, c, b],
    ]) {
      const r = await api.readMany(d, ids, q({ cursor, limit: 16_536 }), true);
      expect(r.status, JSON.stringify(ids)).toBe(400);
    }
    expect((await api.readMany(d, [e, c, a], q({ cursor, limit: 16_536 }), true)).status).toBe(200);
  });

  it("spec error table: a cursor whose series position lies outside the requested list is a 400", async () => {
    // The first page ends inside the third series, so the cursor points at position 2.
    const { cursor } = (await api.readMany(d, [e, b, a], q({ limit: 16_536 }), true)).json;
    const r = await api.readMany(d, [e, b], q({ cursor }), true);
    expect(r.status).toBe(400);
    expect(r.json.detail).toMatch(/outside/);
  });

  it("D26 a page also ends at 1 000 time series entries, whichever bound comes first", async () => {
    const ds = await api.dataset();
    const ids: string[] = [];
    for (let i = 0; i < 1_003; i++) ids.push(await api.series(ds));
    await api.upload(ds, ids[1_001], makeRows(3));
    const first = await api.readMany(ds, ids, "", true);
    expect(first.json.data.length).toBe(1_000);
    expect(first.json.data.every((en: Entry) => en.values.length === 0)).toBe(true);
    const second = await api.readMany(ds, ids, q({ cursor: first.json.cursor }), true);
    expect(second.json.data.map((en: Entry) => en.timeSeriesId)).toEqual(ids.slice(1_000));
    expect(second.json.data[1].values.length).toBe(3);
    expect(second.json.cursor).toBeUndefined();
  }, 60_000);
});

describe("pages equal the whole-range read", () => {
  it("D26 D27 D35 property: for random ranges, limits and id lists, the concatenated pages equal the whole-range read, row for row", async () => {
    const ids = [a, b, c, e];
    const span = 120_000 * 60;
    const time = fc.integer({ min: -1_000, max: span + 1_000 }).map((t) => iso(START + t));
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.constantFrom(...ids), { minLength: 1, maxLength: 4 }),
        fc.option(time, { nil: undefined }),
        fc.option(time, { nil: undefined }),
        fc.array(fc.oneof(fc.integer({ min: 1, max: 60_000 }), fc.constant(undefined)), { minLength: 1, maxLength: 4 }),
        async (list, t1, t2, limits) => {
          const [from, to] = t1 && t2 && t1 > t2 ? [t2, t1] : [t1, t2];
          const whole = (await api.readMany(d, list, q({ from, to }))).json.data as Row[][];
          // Multi-series, with the limit changing from page to page.
          const pages: { data: Entry[] }[] = [];
          let cursor: string | undefined;
          do {
            const r = await api.readMany(d, list, q({ from, to, cursor, limit: limits[pages.length % limits.length] }), true);
            expect(r.status).toBe(200);
            pages.push(r.json);
            cursor = r.json.cursor;
          } while (cursor);
          const got = joined(pages);
          expect(list.map((s) => got.get(s))).toEqual(whole);
          // Single series, first of the list.
          const single = await walkOne(list[0], { from, to, limit: limits[0] });
          expect(single.flatMap((p) => p.data)).toEqual(whole[0]);
        },
      ),
      { numRuns: 25 },
    );
  }, 120_000);
});
