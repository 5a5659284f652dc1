// D47 conditional requests: messages carry an ETag (id and version); PATCH and
// DELETE honour If-Match (a stale one is 412 problem+json with the current
// ETag, and changes nothing; gRPC and Connect send the request's `etag` field
// and get FAILED_PRECONDITION); listings carry an ETag and answer
// If-None-Match with 304 until they change.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { FeatureStatusService, MessageFieldsSchema } from "../../src/gen/meridian/featurestatus/v1/feature_status_pb.js";
import { connectClient } from "../helpers/clients.js";
import { draft, useMessageServer } from "../helpers/messages.js";
import { checkAnswer } from "../helpers/openapi.js";

const t = useMessageServer();

async function send(method: string, path: string, headers: Record<string, string>, body?: unknown) {
  const r = await fetch(t.server.url + path, {
    method,
    headers: { "svc-open-api-key": t.key, "content-type": "application/json", ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  await checkAnswer(t.server.url, method, path, r.status, r.headers.get("content-type"), text); // D41: 412 and 304 are documented
  return { status: r.status, etag: r.headers.get("etag"), text, json: text ? JSON.parse(text) : undefined };
}

describe("D47 conditional requests", () => {
  it("D47 create and update answer the message's ETag; an update changes it", async () => {
    const c = await t.a.create("cond", draft());
    const etag = c.headers.get("etag");
    expect(etag).toBe(`"${c.json.id}.1"`);
    const u = await send("PATCH", `/api/admin/feature/cond/message/${c.json.id}`, {}, { title: "Second" });
    expect([u.status, u.etag]).toEqual([200, `"${c.json.id}.2"`]);
  });

  it("D47 a PATCH with a stale If-Match is 412 problem+json with the current ETag and changes nothing; the current one or * succeeds", async () => {
    const c = await t.a.create("cond", draft({ title: "Original" }));
    const path = `/api/admin/feature/cond/message/${c.json.id}`;
    const first = c.headers.get("etag")!;
    const moved = await send("PATCH", path, { "if-match": first }, { title: "By the first editor" });
    expect(moved.status).toBe(200);
    const late = await send("PATCH", path, { "if-match": first }, { title: "By the second editor" });
    expect(late.status).toBe(412);
    expect(late.json).toMatchObject({ status: 412, code: "failed_precondition" });
    expect(late.etag).toBe(moved.etag);
    const listed = (await t.a.list("cond", "expiry=All")).json.data.find((m: { id: number }) => m.id === c.json.id);
    expect(listed.title).toBe("By the first editor");
    expect((await send("PATCH", path, { "if-match": `W/${moved.etag}` }, { title: "weak" })).status).toBe(412); // If-Match compares strongly
    expect((await send("PATCH", path, { "if-match": `"nope", ${moved.etag}` }, { title: "Listed" })).status).toBe(200);
    expect((await send("PATCH", path, { "if-match": "*" }, { title: "Any" })).status).toBe(200);
  });

  it("D47 a DELETE with a stale If-Match is 412 and deletes nothing; with the current ETag it deletes", async () => {
    const c = await t.a.create(null, draft());
    const path = `/api/admin/feature/message/${c.json.id}`;
    const v1 = c.headers.get("etag")!;
    const v2 = (await send("PATCH", path, {}, { title: "Changed" })).etag!;
    expect((await send("DELETE", path, { "if-match": v1 })).status).toBe(412);
    expect((await send("DELETE", path, { "if-match": v2 })).status).toBe(204);
    expect((await send("DELETE", path, { "if-match": v2 })).status).toBe(404);
  });

  it("D47 two editors with the same ETag at once: exactly one write wins, the other is 412", async () => {
    const c = await t.a.create("cond", draft());
    const path = `/api/admin/feature/cond/message/${c.json.id}`;
    const etag = c.headers.get("etag")!;
    for (let round = 0; round < 5; round++) {
      const current = round === 0 ? etag : (await send("PATCH", path, {}, {})).etag!;
      const both = await Promise.all(
        [1, 2].map((n) => send("PATCH", path, { "if-match": current }, { title: `Editor ${n} round ${round}` })),
      );
      expect(both.map((r) => r.status).sort()).toEqual([200, 412]);
    }
  });

  it("D47 over Connect and gRPC the request's etag field: stale is FAILED_PRECONDITION, current succeeds", async () => {
    const c = await t.a.create("cond", draft({ title: "Over RPC" }));
    const client = connectClient(FeatureStatusService, t.server.url);
    const headers = { "svc-open-api-key": t.key };
    const v1 = c.headers.get("etag")!;
    const updated = await client.updateFeatureMessage(
      { featureId: "cond", messageId: c.json.id, message: create(MessageFieldsSchema, { title: "Once" }), etag: v1 },
      { headers },
    );
    expect(updated.title).toBe("Once");
    const err = await client
      .updateFeatureMessage(
        { featureId: "cond", messageId: c.json.id, message: create(MessageFieldsSchema, { title: "Twice" }), etag: v1 },
        { headers },
      )
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.FailedPrecondition);
    expect((err as ConnectError).metadata.get("etag")).toBe(`"${c.json.id}.2"`);
    await expect(client.deleteFeatureMessage({ featureId: "cond", messageId: c.json.id, etag: v1 }, { headers })).rejects.toMatchObject({
      code: Code.FailedPrecondition,
    });
    await client.deleteFeatureMessage({ featureId: "cond", messageId: c.json.id, etag: `"${c.json.id}.2"` }, { headers });
  });

  it("D47 a listing carries an ETag; If-None-Match with it is 304 with no body, until a write changes the listing", async () => {
    await t.a.create("listed", draft({ title: "One" }));
    const first = await send("GET", "/api/admin/feature/listed/message", {});
    expect(first.status).toBe(200);
    expect(first.etag).toMatch(/^W\/".+"$/);
    const again = await send("GET", "/api/admin/feature/listed/message", { "if-none-match": first.etag! });
    expect([again.status, again.text, again.etag]).toEqual([304, "", first.etag]);
    await t.a.create("listed", draft({ title: "Two" }));
    const after = await send("GET", "/api/admin/feature/listed/message", { "if-none-match": first.etag! });
    expect(after.status).toBe(200);
    expect(after.etag).not.toBe(first.etag);
    expect(after.json.data.map((m: { title: string }) => m.title).sort()).toEqual(["One", "Two"]);
  });

  it("D13 D47 GET of one message answers it with its ETag, for whoever may list its scope; another scope's is a 404", async () => {
    const c = await t.a.create("single", draft({ title: "One" }));
    const r = await send("GET", `/api/admin/feature/single/message/${c.json.id}`, {});
    expect([r.status, r.etag, r.json]).toEqual([200, c.headers.get("etag"), c.json]);
    expect((await send("GET", `/api/admin/feature/other/message/${c.json.id}`, {})).status).toBe(404);
    const global = (await t.a.create(null, draft())).json;
    const rpc = await fetch(`${t.server.url}/meridian.featurestatus.v1.FeatureStatusService/GetGlobalMessage`, {
      method: "POST",
      headers: { "svc-open-api-key": t.key, "content-type": "application/json" },
      body: JSON.stringify({ messageId: global.id }),
    });
    expect([rpc.status, rpc.headers.get("etag"), (await rpc.json()).title]).toEqual([200, `"${global.id}.1"`, global.title]);
  });

  it("D20 D49 POST .../message/preview answers the fields as a write would store them, or its field errors, and stores nothing", async () => {
    const before = (await t.a.list(null, "expiry=All")).json.data.length;
    const ok = await send(
      "POST",
      "/api/admin/feature/message/preview",
      {},
      { body: '<p onclick="x()">Hi <script>alert(1)</script><a href="javascript:y()">z</a></p>', title: "<b>T</b>" },
    );
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({ body: "<p>Hi <a>z</a></p>", title: "T" });
    const bad = await send("POST", "/api/admin/feature/message/preview", {}, { title: "<b></b>" });
    expect([bad.status, Object.keys(bad.json.errors)]).toEqual([400, ["title"]]);
    expect((await t.a.list(null, "expiry=All")).json.data.length).toBe(before);
  });

  it("D49 a preview checks what was sent: a start date alone, or an expiring date alone, is not held against a date it was not sent", async () => {
    const start = await send("POST", "/api/admin/feature/message/preview", {}, { startDate: "2030-01-01T00:00:00+02:00" });
    expect([start.status, start.json]).toEqual([200, expect.objectContaining({ startDate: "2029-12-31T22:00:00Z", expiringDate: null })]);
    const expiring = await send("POST", "/api/admin/feature/message/preview", {}, { expiringDate: "1999-01-01T00:00:00Z" });
    expect([expiring.status, expiring.json]).toEqual([
      200,
      expect.objectContaining({ startDate: null, expiringDate: "1999-01-01T00:00:00Z" }),
    ]);
    // Both sent: their order is checked, as a write would.
    const both = await send(
      "POST",
      "/api/admin/feature/message/preview",
      {},
      { startDate: "2030-01-02T00:00:00Z", expiringDate: "2030-01-01T00:00:00Z" },
    );
    expect([both.status, both.json.errors]).toEqual([400, { expiringDate: ["must be after startDate"] }]);
  });
});
