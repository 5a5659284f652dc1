// D59: a JSON body with a field the API does not have is a 400 naming it, on
// every REST route and over Connect's JSON, and nothing is stored; a field the
// spec says is ignored (featureId in a message body, D15) stays accepted.
import { describe, expect, it } from "vitest";
import { draft, useMessageServer } from "../helpers/messages.js";
import { TS_RW, tsApi } from "../helpers/timeseries.js";

const t = useMessageServer();

const problem = (r: { status: number; json: { errors?: Record<string, string[]>; detail?: string } }) => ({
  status: r.status,
  fields: Object.keys(r.json?.errors ?? {}),
});

describe("D59 unknown JSON fields", () => {
  it("D59 a message create with an unknown field is a 400 naming it, and nothing is stored", async () => {
    const { a } = t;
    const before = (await a.list(null, "expiry=All&limit=1000")).json.data.length;
    for (const [body, field] of [
      [{ ...draft(), bdy: "typo" }, "bdy"],
      [{ ...draft(), translatoins: { de: { title: "Wartung" } } }, "translatoins"],
      // D62: a translation's fields are named too.
      [{ ...draft(), translations: { de: { title: "Wartung", colour: "red" } } }, "translations.de.colour"],
    ] as const) {
      const r = await a.create(null, body);
      expect(problem(r)).toEqual({ status: 400, fields: [field] });
      expect(r.json.detail).toContain(field);
    }
    expect((await a.list(null, "expiry=All&limit=1000")).json.data.length).toBe(before);
  });

  it("D59 an update with an unknown field is a 400 and changes nothing", async () => {
    const { a } = t;
    const m = (await a.create("uf", draft({ title: "kept" }))).json;
    const r = await a.update("uf", m.id, { title: "changed", colour: "red" });
    expect(problem(r)).toEqual({ status: 400, fields: ["colour"] });
    const listed = (await a.list("uf", "expiry=All")).json.data.find((x: { id: number }) => x.id === m.id);
    expect(listed.title).toBe("kept");
  });

  it("D52 a message read back and sent unchanged is accepted, by PATCH and by POST: what only a read answers (id, version, language, dismissed) is ignored", async () => {
    const { a } = t;
    const m = (await a.create("rb", draft({ title: "Read back", audiences: ["staff"], translations: { de: { title: "Zurück" } } }))).json;
    const got = await (
      await fetch(`${t.server.url}/api/admin/feature/rb/message/${m.id}`, { headers: { "svc-open-api-key": t.key } })
    ).json();
    expect(got).toMatchObject({ id: m.id, version: 1, language: null, dismissed: false });
    const patched = await a.update("rb", m.id, got);
    expect(patched.status, JSON.stringify(patched.json)).toBe(200);
    expect(patched.json).toMatchObject({ id: m.id, title: "Read back", audiences: ["staff"], translations: { de: { title: "Zurück" } } });
    const copied = await a.create("rb", { ...got, id: 999_999, version: 7 });
    expect(copied.status, JSON.stringify(copied.json)).toBe(201);
    expect(copied.json.id).not.toBe(m.id);
    expect(copied.json).toMatchObject({ title: "Read back", version: 1 });
  });

  it("D52 D62 a message read in a translation (language set) sent back is a 400 naming language, and the default text stays", async () => {
    const { a } = t;
    const m = (await a.create("rb", draft({ title: "Default", translations: { de: { title: "Deutsch" } } }))).json;
    const inGerman = (await a.list("rb", "lang=de&expiry=All&limit=1000")).json.data.find((x: { id: number }) => x.id === m.id);
    expect(inGerman).toMatchObject({ title: "Deutsch", language: "de" });
    const r = await a.update("rb", m.id, inGerman);
    expect(problem(r)).toEqual({ status: 400, fields: ["language"] });
    const stored = (await a.list("rb", "expiry=All&limit=1000")).json.data.find((x: { id: number }) => x.id === m.id);
    expect(stored.title).toBe("Default");
  });

  it("D15 D59 featureId in a message body is still accepted and ignored", async () => {
    const r = await t.a.create("uf2", { ...draft(), featureId: "other" });
    expect(r.status).toBe(201);
    expect(r.json.featureId).toBe("uf2");
  });

  it("D59 an unknown field nested in a time series body is named by its path", async () => {
    const ts = tsApi(t.server, await t.server.key(TS_RW));
    const d = await ts.dataset();
    const r = await ts.call("POST", `/api/ts/dataset/${d}/timeseries`, {
      item: { name: "Level", nmae: "typo" },
      dataFields: [{ name: "value", dataType: "Single" }],
    });
    expect(problem(r)).toEqual({ status: 400, fields: ["item.nmae"] });
    const s = await ts.series(d);
    const up = await ts.call("POST", `/api/ts/dataset/${d}/timeseries/${s}/values`, { data: [["2000-01-01T00:00:00", 1, 0]], dta: [] });
    expect(problem(up)).toEqual({ status: 400, fields: ["dta"] });
    expect((await ts.read(d, s)).json.data).toEqual([]);
  });

  it.each(["constructor", "toString", "valueOf", "hasOwnProperty", "__proto__"])(
    "D8 D59 a body field named %s, as every JavaScript object's, is a 400 naming it, not a 500",
    async (name) => {
      const { a } = t;
      const created = await a.create(null, JSON.parse(`{${JSON.stringify(name)}: 1, "type": "Warning", "title": "t", "body": "b"}`));
      expect(problem(created)).toEqual({ status: 400, fields: [name] });
      const m = (await a.create("proto", draft({ title: "kept" }))).json;
      const updated = await a.update("proto", m.id, JSON.parse(`{${JSON.stringify(name)}: {"polluted": true}}`));
      expect(problem(updated)).toEqual({ status: 400, fields: [name] });
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    },
  );

  it("D59 over Connect's JSON too: invalid_argument naming the field", async () => {
    const r = await fetch(`${t.server.url}/meridian.featurestatus.v1.FeatureStatusService/CreateGlobalMessage`, {
      method: "POST",
      headers: { "svc-open-api-key": t.key, "content-type": "application/json" },
      body: JSON.stringify({ message: { ...draft(), bdy: "typo" } }),
    });
    expect(r.status).toBe(400);
    const body = await r.json();
    expect(body.code).toBe("invalid_argument");
    expect(body.message).toContain("message.bdy");
  });
});
