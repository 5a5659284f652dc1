// Part A routes, D15-D19, D21 through REST on the real server.
import { beforeAll, describe, expect, it } from "vitest";
import { draft, forgedCursors, iso, useMessageServer, type ApiMessage } from "../helpers/messages.js";

const t = useMessageServer();

describe("the eight routes", () => {
  it("D15 create answers 201 with every field; featureId comes from the route, not the body", async () => {
    const r = await t.a.create("alpha", { ...draft(), featureId: "beta" });
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({ featureId: "alpha", type: "Warning", title: "Maintenance", body: "<b>soon</b>" });
    expect(Object.keys(r.json).sort()).toEqual([
      "audiences",
      "body",
      "dismissed",
      "dismissible",
      "expiringDate",
      "featureId",
      "id",
      "language",
      "paths",
      "startDate",
      "title",
      "translations",
      "type",
      "version",
    ]);
    expect(r.json).toMatchObject({ audiences: [], paths: [], translations: {}, language: null, version: 1 });
    expect(Number.isInteger(r.json.id)).toBe(true);
  });

  it("global create is stored as global (featureId null) whatever the body says", async () => {
    const r = await t.a.create(null, { ...draft(), featureId: "alpha" });
    expect(r.status).toBe(201);
    expect(r.json.featureId).toBeNull();
  });

  it("a feature listing holds its own messages and every global one, not other features'", async () => {
    const own = (await t.a.create("list-f", draft({ title: "own" }))).json as ApiMessage;
    const other = (await t.a.create("list-other", draft({ title: "other" }))).json as ApiMessage;
    const global = (await t.a.create(null, draft({ title: "global" }))).json as ApiMessage;
    const ids = ((await t.a.list("list-f", "limit=1000")).json.data as ApiMessage[]).map((m) => m.id);
    expect(ids).toContain(own.id);
    expect(ids).toContain(global.id);
    expect(ids).not.toContain(other.id);
    const globalIds = ((await t.a.list(null, "limit=1000")).json.data as ApiMessage[]).map((m) => m.id);
    expect(globalIds).toContain(global.id);
    expect(globalIds).not.toContain(own.id);
  });

  it("update and delete on the feature route; 404 for another feature's message or a global one", async () => {
    const m = (await t.a.create("upd", draft())).json as ApiMessage;
    const g = (await t.a.create(null, draft())).json as ApiMessage;
    expect((await t.a.update("other", m.id, { title: "x" })).status).toBe(404);
    expect((await t.a.update("upd", g.id, { title: "x" })).status).toBe(404);
    expect((await t.a.remove("other", m.id)).status).toBe(404);
    expect((await t.a.remove("upd", g.id)).status).toBe(404);
    const u = await t.a.update("upd", m.id, { title: "changed", featureId: "elsewhere" });
    expect(u.status).toBe(200);
    expect(u.json).toMatchObject({ id: m.id, featureId: "upd", title: "changed" });
    const d = await t.a.remove("upd", m.id);
    expect(d.status).toBe(204);
    expect((await t.a.remove("upd", m.id)).status).toBe(404);
  });

  it("update and delete on the global route; 404 for a feature message", async () => {
    const m = (await t.a.create("gfeat", draft())).json as ApiMessage;
    const g = (await t.a.create(null, draft())).json as ApiMessage;
    expect((await t.a.update(null, m.id, { title: "x" })).status).toBe(404);
    expect((await t.a.remove(null, m.id)).status).toBe(404);
    expect((await t.a.update(null, g.id, { type: "Critical" })).json).toMatchObject({ id: g.id, featureId: null, type: "Critical" });
    expect((await t.a.remove(null, g.id)).status).toBe(204);
    expect((await t.a.update(null, 999999, { title: "x" })).status).toBe(404);
  });

  it("D15 a message id in a path is a decimal integer without sign or leading zeros, else 400 and nothing changes", async () => {
    const m = (await t.a.create("ids", draft({ title: "by id" }))).json as ApiMessage;
    const id = String(m.id);
    const forms = [
      `0x${m.id.toString(16)}`,
      `+${id}`,
      `%2B${id}`,
      `-${id}`,
      `0${id}`,
      `00${id}`,
      `${id}.0`,
      `${id}e0`,
      `%20${id}`,
      `${id}%20`,
      `${id}%00`,
      `1_${id}`,
    ];
    for (const form of forms) {
      const path = `/api/admin/feature/ids/message/${form}`;
      for (const [method, body] of [["GET"], ["PATCH", { title: "changed" }], ["DELETE"]] as const) {
        const r = await t.a.call(method, path, body);
        expect([form, method, r.status, Object.keys(r.json.errors ?? {})]).toEqual([form, method, 400, ["messageId"]]);
      }
    }
    // Percent-encoded digits are the digits (RFC 3986, 2.3: unreserved characters are equivalent encoded or not).
    const encoded = id
      .split("")
      .map((d) => `%3${d}`)
      .join("");
    expect(((await t.a.call("GET", `/api/admin/feature/ids/message/${encoded}`)).json as ApiMessage).title).toBe("by id");
    expect(((await t.a.call("GET", `/api/admin/feature/ids/message/${id}`)).json as ApiMessage).title).toBe("by id");
  });

  it("a problem+json 404 for an unknown message id", async () => {
    const r = await t.a.update("x", 123456789, { title: "t" });
    expect(r.status).toBe(404);
    expect(r.headers.get("content-type")).toBe("application/problem+json; charset=utf-8");
  });
});

describe("D15-D18 validation", () => {
  it.each([
    ["type", { type: undefined }],
    ["title", { title: undefined }],
    ["startDate", { startDate: undefined }],
    ["expiringDate", { expiringDate: undefined }],
  ])("D15 %s is required on create", async (field, over) => {
    const r = await t.a.create("req", draft(over));
    expect(r.status).toBe(400);
    expect(Object.keys(r.json.errors)).toContain(field);
  });

  it("D15 body defaults to an empty string", async () => {
    const r = await t.a.create("req", draft({ body: undefined }));
    expect(r.status).toBe(201);
    expect(r.json.body).toBe("");
  });

  it.each(["critical", "Error", "", "Info"])("D15 type %j is refused", async (type) => {
    const r = await t.a.create("req", draft({ type }));
    expect(r.status).toBe(400);
    expect(Object.keys(r.json.errors)).toEqual(["type"]);
  });

  it("D15 expiringDate must be after startDate", async () => {
    const r = await t.a.create("req", draft({ startDate: "2030-01-01T00:00:00Z", expiringDate: "2030-01-01T00:00:00Z" }));
    expect(r.status).toBe(400);
    expect(Object.keys(r.json.errors)).toEqual(["expiringDate"]);
  });

  it.each(["2030-01-01T00:00:00", "2030-01-01", "tomorrow", "2030-02-30T00:00:00Z", "2030-01-01T25:00:00Z", "2030-01-01T00:00:00+25:00"])(
    "D15 date %j is refused",
    async (d) => {
      const r = await t.a.create("req", draft({ startDate: d }));
      expect(r.status).toBe(400);
      expect(Object.keys(r.json.errors)).toEqual(["startDate"]);
    },
  );

  it("D15 dates with an offset are stored in UTC and returned as yyyy-MM-ddTHH:mm:ssZ", async () => {
    const r = await t.a.create("tz", draft({ startDate: "2030-06-01T12:30:00+02:00", expiringDate: "2030-06-02T00:00:00.750-05:30" }));
    expect(r.status).toBe(201);
    expect(r.json.startDate).toBe("2030-06-01T10:30:00Z");
    expect(r.json.expiringDate).toBe("2030-06-02T05:30:00Z");
  });

  it("D17 lengths count code points: 255 astral characters are a valid title, 256 are not", async () => {
    expect((await t.a.create("len", draft({ title: "😀".repeat(255) }))).status).toBe(201);
    const r = await t.a.create("len", draft({ title: "😀".repeat(256) }));
    expect(r.status).toBe(400);
    expect(Object.keys(r.json.errors)).toEqual(["title"]);
  });

  it("D17 a body over 4000 code points is refused, not cut", async () => {
    expect((await t.a.create("len", draft({ body: "é".repeat(4000) }))).status).toBe(201);
    const r = await t.a.create("len", draft({ body: "é".repeat(4001) }));
    expect(r.status).toBe(400);
    expect(Object.keys(r.json.errors)).toEqual(["body"]);
  });

  it.each(["has space", "a".repeat(129), "semi;colon", "ümlaut"])("D18 feature id %j is refused", async (id) => {
    const r = await t.a.create(encodeURIComponent(id), draft());
    expect(r.status).toBe(400);
    expect(Object.keys(r.json.errors)).toEqual(["featureId"]);
  });

  it("D18 a 128-character feature id of the allowed set is fine", async () => {
    expect((await t.a.create("A.b_c-9".padEnd(128, "z"), draft())).status).toBe(201);
  });

  it("D16 update is partial: absent fields keep their value, and the merge is validated", async () => {
    const m = (await t.a.create("patch", draft({ title: "keep", body: "<i>keep</i>" }))).json as ApiMessage;
    const u = await t.a.update("patch", m.id, { type: "Informational" });
    expect(u.json).toMatchObject({ title: "keep", body: "<i>keep</i>", type: "Informational", startDate: m.startDate });
    const bad = await t.a.update("patch", m.id, { expiringDate: "2000-01-01T00:00:00Z" });
    expect(bad.status).toBe(400);
    const after = (await t.a.list("patch", "expiry=All")).json.data.find((x: ApiMessage) => x.id === m.id);
    expect(after.expiringDate).toBe(m.expiringDate);
  });

  it("D8 a failed create stores nothing and names every bad field", async () => {
    const before = (await t.a.list("nothing", "expiry=All")).json.data.length;
    const r = await t.a.create("nothing", { type: "Nope", title: "", startDate: "x", expiringDate: "y" });
    expect(r.status).toBe(400);
    expect(Object.keys(r.json.errors).sort()).toEqual(["expiringDate", "startDate", "title", "type"]);
    const r2 = await t.a.create("nothing", draft({ type: "Nope", startDate: "x" }));
    expect(Object.keys(r2.json.errors).sort()).toEqual(["startDate", "type"]);
    expect((await t.a.list("nothing", "expiry=All")).json.data.length).toBe(before);
  });
});

describe("D19 windows and sorting", () => {
  let pending: ApiMessage, active: ApiMessage, expired: ApiMessage;
  beforeAll(async () => {
    pending = (await t.a.create("win", draft({ startDate: iso(3600), expiringDate: iso(7200) }))).json;
    active = (await t.a.create("win", draft({ startDate: iso(-3600), expiringDate: iso(3600) }))).json;
    expired = (await t.a.create("win", draft({ startDate: iso(-7200), expiringDate: iso(-3600) }))).json;
  });
  const ids = async (q: string) =>
    ((await t.a.list("win", q)).json.data as ApiMessage[]).filter((m) => m.featureId === "win").map((m) => m.id);

  it("D19 the default listing holds the active messages only", async () => {
    expect(await ids("")).toEqual([active.id]);
  });
  it("D19 Pending, Expired and All", async () => {
    expect(await ids("expiry=Pending")).toEqual([pending.id]);
    expect(await ids("expiry=Expired")).toEqual([expired.id]);
    expect((await ids("expiry=All")).sort()).toEqual([pending.id, active.id, expired.id].sort());
  });
  it("D19 filter and sort values are case-insensitive", async () => {
    expect(await ids("expiry=pending")).toEqual([pending.id]);
    expect(await ids("expiry=ALL&sortBy=startdate&sortOrder=asc")).toEqual([expired.id, active.id, pending.id]);
  });
  it("D19 sortBy ExpiringDate, Desc by default", async () => {
    expect(await ids("expiry=All&sortBy=ExpiringDate")).toEqual([pending.id, active.id, expired.id]);
  });
  it.each(["expiry=Soon", "sortBy=Title", "sortOrder=Up"])("D19 unknown value %s gets 400", async (q) => {
    const r = await t.a.list("win", q);
    expect(r.status).toBe(400);
    expect(Object.keys(r.json.errors)).toEqual([q.split("=")[0]]);
  });
  it("D19 ties in the sort key are broken by id in the same direction", async () => {
    const same = { startDate: "2031-01-01T00:00:00Z", expiringDate: "2032-01-01T00:00:00Z" };
    const made = [];
    for (let i = 0; i < 3; i++) made.push(((await t.a.create("ties", draft(same))).json as ApiMessage).id);
    const only = async (q: string) =>
      ((await t.a.list("ties", q)).json.data as ApiMessage[]).filter((m) => m.featureId === "ties").map((m) => m.id);
    expect(await only("expiry=Pending&sortOrder=Asc")).toEqual(made);
    expect(await only("expiry=Pending&sortOrder=Desc")).toEqual([...made].reverse());
  });
});

describe("D21 limit and cursor", () => {
  beforeAll(async () => {
    for (let i = 0; i < 25; i++) await t.a.create("page", draft({ startDate: iso(-10_000 + i * 10) }));
  });

  it("D21 limit defaults to 100 and the last page has cursor null", async () => {
    const r = await t.a.list("page", "expiry=All");
    expect(r.json.data.length).toBeLessThanOrEqual(100);
    expect(r.json.cursor).toBeNull();
  });

  it("D21 limit above 1000 is clamped", async () => {
    await t.server.query(
      `INSERT INTO messages (feature_id, type, title, body, start_date, expiring_date)
       SELECT 'clamp', 'Warning', 't', '', 0, 1 FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1001) SELECT i FROM n) AS rows`,
    );
    const r = await t.a.list("clamp", "expiry=Expired&limit=5000");
    expect(r.status).toBe(200);
    expect(r.json.data.length).toBe(1000);
    expect(typeof r.json.cursor).toBe("string");
  });

  it.each(["0", "-1", "1.5", "ten", "99999999999"])("D21 limit %s gets 400", async (l) => {
    const r = await t.a.list("page", `limit=${l}`);
    expect(r.status).toBe(400);
    expect(Object.keys(r.json.errors)).toEqual(["limit"]);
  });

  it("D21 pages chain through the cursor until it is null", async () => {
    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const r: { json: { data: ApiMessage[]; cursor: string | null } } = await t.a.list(
        "page",
        `expiry=All&limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      );
      seen.push(...r.json.data.filter((m) => m.featureId === "page").map((m) => m.id));
      cursor = r.json.cursor;
    } while (cursor);
    expect(seen.length).toBe(25);
    expect(new Set(seen).size).toBe(25);
  });

  it("D21 a cursor used with another listing gets 400, and so does a malformed one", async () => {
    const first = await t.a.list("page", "expiry=All&limit=5");
    const cursor = encodeURIComponent(first.json.cursor);
    for (const q of [
      `expiry=Expired&cursor=${cursor}`,
      `expiry=All&sortBy=ExpiringDate&cursor=${cursor}`,
      `expiry=All&sortOrder=Asc&cursor=${cursor}`,
    ]) {
      const r = await t.a.list("page", `${q}&limit=5`);
      expect(r.status).toBe(400);
      expect(Object.keys(r.json.errors)).toEqual(["cursor"]);
    }
    expect((await t.a.list("other-feature", `expiry=All&cursor=${cursor}`)).status).toBe(400);
    expect((await t.a.list(null, `expiry=All&cursor=${cursor}`)).status).toBe(400);
    for (const bad of ["garbage", first.json.cursor.slice(0, -3), first.json.cursor + "x", "e30.AAAAAAAAAAAAAAAAAAAAAA"]) {
      expect((await t.a.list("page", `expiry=All&cursor=${encodeURIComponent(bad)}`)).status).toBe(400);
    }
    // The same listing with a different limit is the same listing.
    expect((await t.a.list("page", `expiry=All&limit=9&cursor=${cursor}`)).status).toBe(200);
  });

  it("D21 a cursor is exactly what the server issued: junk after its signature, or other padding bits in its last character, is 400", async () => {
    const first = await t.a.list("page", "expiry=All&limit=5");
    const issued: string = first.json.cursor;
    for (const bad of forgedCursors(issued)) {
      const r = await t.a.list("page", `expiry=All&limit=5&cursor=${encodeURIComponent(bad)}`);
      expect([bad, r.status]).toEqual([bad, 400]);
      expect(Object.keys(r.json.errors)).toEqual(["cursor"]);
    }
    expect((await t.a.list("page", `expiry=All&limit=5&cursor=${encodeURIComponent(issued)}`)).status).toBe(200);
  });

  it("D21 inserts and deletes between pages neither repeat nor skip a row", async () => {
    const f = "keyset";
    const made: ApiMessage[] = [];
    for (let i = 0; i < 30; i++) made.push((await t.a.create(f, draft({ startDate: iso(-20_000 + i * 60) }))).json);
    const seen: number[] = [];
    let cursor: string | null = null;
    let round = 0;
    const deleted = new Set<number>();
    const inserted = new Set<number>();
    do {
      const r: { json: { data: ApiMessage[]; cursor: string | null } } = await t.a.list(
        f,
        `expiry=All&sortOrder=Asc&limit=4${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      );
      seen.push(...r.json.data.filter((m) => m.featureId === f).map((m) => m.id));
      cursor = r.json.cursor;
      // Between pages: delete a row not read yet and insert one before and one after the position.
      if (!cursor) break;
      const unread = made.filter((m) => !seen.includes(m.id) && !deleted.has(m.id));
      if (unread.length > 2) {
        await t.a.remove(f, unread[1].id);
        deleted.add(unread[1].id);
      }
      await t.a.create(f, draft({ startDate: iso(-30_000 - round) })); // before the position: never seen
      const late = (await t.a.create(f, draft({ startDate: iso(-100 + round) }))).json as ApiMessage; // after: seen once
      inserted.add(late.id);
      round++;
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length); // no repeats
    for (const m of made) if (!deleted.has(m.id)) expect(seen).toContain(m.id); // no skips
    for (const id of deleted) expect(seen).not.toContain(id);
    for (const id of inserted) expect(seen).toContain(id);
  });
});
