// D15, D52: message dates lie in 0001-01-01T00:00:00Z..9999-12-31T23:59:59Z
// once converted to UTC; inside they are stored and returned as written (in
// UTC), outside they are a 400 and nothing is stored.
import { describe, expect, it } from "vitest";
import { draft, useMessageServer, type ApiMessage } from "../helpers/messages.js";

const t = useMessageServer();
const RANGE = "must lie in 0001-01-01T00:00:00Z..9999-12-31T23:59:59Z once converted to UTC";

describe("D52 message dates", () => {
  it("D52 message dates in years 0001-0099 are accepted and returned as written", async () => {
    const r = await t.a.create("dates", draft({ startDate: "0001-01-01T00:00:00Z", expiringDate: "0099-12-31T23:59:59Z" }));
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({ startDate: "0001-01-01T00:00:00Z", expiringDate: "0099-12-31T23:59:59Z" });
    const u = await t.a.update("dates", r.json.id, { startDate: "0050-02-28T23:30:00-01:00", expiringDate: "0096-02-29T12:00:00+02:00" });
    expect(u.status).toBe(200);
    expect(u.json).toMatchObject({ startDate: "0050-03-01T00:30:00Z", expiringDate: "0096-02-29T10:00:00Z" });
  });

  it("D52 the last second of 9999 is accepted, and a message read is accepted again when sent back", async () => {
    const r = await t.a.create("dates", draft({ startDate: "9999-12-31T11:59:58-12:00", expiringDate: "9999-12-31T23:59:59Z" }));
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({ startDate: "9999-12-31T23:59:58Z", expiringDate: "9999-12-31T23:59:59Z" });
    const m = r.json as ApiMessage & { version: number };
    const again = await t.a.update("dates", m.id, { startDate: m.startDate, expiringDate: m.expiringDate });
    expect(again.status).toBe(200);
    expect(again.json).toEqual({ ...m, version: m.version + 1 }); // the same dates; every write moves the version (D47)
  });

  it("D52 a date that converts to after 9999-12-31T23:59:59Z is a 400", async () => {
    const r = await t.a.create("dates-late", draft({ expiringDate: "9999-12-31T23:59:59-12:00" }));
    expect(r.status).toBe(400);
    expect(r.json.errors).toEqual({ expiringDate: [RANGE] });
    expect((await t.a.list("dates-late", "expiry=All")).json.data).toEqual([]);
  });

  it("D52 a date that converts to before 0001-01-01T00:00:00Z is a 400", async () => {
    const r = await t.a.create("dates-early", draft({ startDate: "0001-01-01T00:00:00+00:01" }));
    expect(r.status).toBe(400);
    expect(r.json.errors).toEqual({ startDate: [RANGE] });
    expect((await t.a.list("dates-early", "expiry=All")).json.data).toEqual([]);
  });

  it("D15 year 0000, 29 February of a common year and hour 24 are not valid date-times", async () => {
    for (const startDate of ["0000-12-31T00:00:00Z", "2023-02-29T00:00:00Z", "2024-01-01T24:00:00Z", "2024-13-01T00:00:00Z"]) {
      const r = await t.a.create("dates", draft({ startDate }));
      expect(r.status, startDate).toBe(400);
      expect(r.json.errors, startDate).toEqual({ startDate: ["is not a valid date-time"] });
    }
  });
});
