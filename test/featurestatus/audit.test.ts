// D48 the audit trail: every create, update and delete, and every deletion by
// the retention cleanup, with when, who (client, API key or token issuer and
// subject) and the message before and after; read by BackOffice at
// /api/admin/feature/message/audit with filters and cursor paging (D21);
// kept MERIDIAN_AUDIT_RETENTION_DAYS.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FeatureStatusService } from "../../src/gen/meridian/featurestatus/v1/feature_status_pb.js";
import { connectClient } from "../helpers/clients.js";
import { RW, api, draft, forgedCursors } from "../helpers/messages.js";
import { checkAnswer } from "../helpers/openapi.js";
import { bearer, signToken, startTestServer, type TestServer } from "../helpers/server.js";

let server: TestServer;
let key: string;
beforeAll(async () => {
  server = await startTestServer();
  key = await server.key({ ...RW, clientId: "ops" });
});
afterAll(() => server.close());

interface Entry {
  id: string;
  at: string;
  action: string;
  messageId: number;
  featureId: string | null;
  clientId: string | null;
  keyId: string | null;
  issuer: string | null;
  subject: string | null;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

async function audit(query = "", headers: Record<string, string> = { "svc-open-api-key": key }) {
  const path = `/api/admin/feature/message/audit${query ? "?" + query : ""}`;
  const r = await fetch(server.url + path, { headers });
  const text = await r.text();
  await checkAnswer(server.url, "GET", path, r.status, r.headers.get("content-type"), text); // D41
  return { status: r.status, json: JSON.parse(text) as { data: Entry[]; cursor: string | null } };
}

describe("D48 audit trail", () => {
  it("D48 create, update and delete are recorded with when, who and the message before and after", async () => {
    const a = api(server, key);
    const t0 = Date.now();
    const created = (await a.create("audited", draft({ title: "First" }))).json;
    const updated = (await a.update("audited", created.id, { title: "Second" })).json;
    expect((await a.remove("audited", created.id)).status).toBe(204);
    const { json } = await audit(`messageId=${created.id}`);
    expect(json.data.map((e) => e.action)).toEqual(["delete", "update", "create"]); // newest first
    const [del, upd, cre] = json.data;
    expect(cre).toMatchObject({ messageId: created.id, featureId: "audited", clientId: "ops", before: null, after: created });
    expect(cre.keyId).toMatch(/^[A-Za-z0-9]+$/);
    expect(key).toContain(cre.keyId!);
    expect(upd).toMatchObject({ before: created, after: updated });
    expect(del).toMatchObject({ before: updated, after: null });
    expect(Date.parse(cre.at)).toBeGreaterThanOrEqual(t0 - 1000);
    expect(Date.parse(del.at)).toBeLessThanOrEqual(Date.now());
  });

  it("D48 a bearer token's issuer and subject are recorded", async () => {
    const token = await signToken({
      client_id: "console",
      scope: "platform_iam_featurestatus_readwrite",
      role: "BackOffice",
      iss: "https://id.example",
      sub: "alice",
    });
    const r = await fetch(server.url + "/api/admin/feature/message", {
      method: "POST",
      headers: { ...bearer(token), "content-type": "application/json" },
      body: JSON.stringify(draft({ title: "By Alice" })),
    });
    const m = await r.json();
    const { json } = await audit(`messageId=${m.id}`);
    expect(json.data[0]).toMatchObject({
      action: "create",
      clientId: "console",
      keyId: null,
      issuer: "https://id.example",
      subject: "alice",
      featureId: null,
    });
  });

  it("D48 D21 filters by feature, client and time, and pages newest first with a cursor", async () => {
    const other = await server.key({ ...RW, clientId: "other" });
    for (let i = 0; i < 5; i++) await api(server, key).create("paged-audit", draft({ title: `m${i}` }));
    await api(server, other).create("paged-audit", draft({ title: "by other" }));
    const byFeature = await audit("featureId=paged-audit&limit=4");
    expect(byFeature.json.data).toHaveLength(4);
    expect(byFeature.json.data[0].after!.title).toBe("by other");
    const rest = await audit(`featureId=paged-audit&limit=4&cursor=${encodeURIComponent(byFeature.json.cursor!)}`);
    expect(rest.json.data.map((e) => e.after!.title)).toEqual(["m1", "m0"]);
    expect(rest.json.cursor).toBeNull();
    expect((await audit("featureId=paged-audit&clientId=other")).json.data.map((e) => e.after!.title)).toEqual(["by other"]);
    const future = new Date(Date.now() + 3_600_000).toISOString().slice(0, 19) + "Z";
    expect((await audit(`featureId=paged-audit&from=${future}`)).json.data).toEqual([]);
    expect((await audit(`featureId=paged-audit&to=${future}`)).json.data).toHaveLength(6);
    expect((await audit(`featureId=other-feature&cursor=${encodeURIComponent(byFeature.json.cursor!)}`)).status).toBe(400); // bound to its filters
    // D21: exactly the cursor issued, not one a lenient base64 decoder reads the same.
    for (const bad of forgedCursors(byFeature.json.cursor!))
      expect([bad, (await audit(`featureId=paged-audit&limit=4&cursor=${encodeURIComponent(bad)}`)).status]).toEqual([bad, 400]);
  });

  it("D13 D48 only BackOffice reads it", async () => {
    const reader = await server.key({ clientId: "reader", scopes: ["platform_iam_featurestatus_readwrite"] });
    expect((await audit("", { "svc-open-api-key": reader })).status).toBe(403);
    expect((await audit("", {})).status).toBe(401);
  });

  it("D48 over Connect: ListMessageAudit", async () => {
    const client = connectClient(FeatureStatusService, server.url);
    const r = await client.listMessageAudit({ featureId: "audited", limit: 2 }, { headers: { "svc-open-api-key": key } });
    expect(r.data.map((e) => e.action)).toEqual(["delete", "update"]);
    expect(r.cursor).toBeDefined();
  });

  it("D22 D48 the cleanup's deletions are recorded, and entries past MERIDIAN_AUDIT_RETENTION_DAYS are removed", async () => {
    const s = await startTestServer({ MERIDIAN_CLEANUP_INTERVAL_S: "1", MERIDIAN_MESSAGE_RETENTION_DAYS: "0" });
    try {
      const k = await s.key({ ...RW, clientId: "ops" });
      const old = (await api(s, k).create("gone", draft({ startDate: "2000-01-01T00:00:00Z", expiringDate: "2000-01-02T00:00:00Z" }))).json;
      const read = async () =>
        (await (
          await fetch(`${s.url}/api/admin/feature/message/audit?messageId=${old.id}`, { headers: { "svc-open-api-key": k } })
        ).json()) as { data: Entry[] };
      for (const until = Date.now() + 4000; (await read()).data.length < 2 && Date.now() < until;)
        await new Promise((r) => setTimeout(r, 100));
      const [cleanup] = (await read()).data;
      expect(cleanup).toMatchObject({ action: "cleanup", clientId: null, before: old, after: null });
    } finally {
      await s.close();
    }
    const t = await startTestServer({ MERIDIAN_CLEANUP_INTERVAL_S: "1", MERIDIAN_AUDIT_RETENTION_DAYS: "0" });
    try {
      const k = await t.key({ ...RW, clientId: "ops" });
      await api(t, k).create("kept", draft());
      const count = async () =>
        (
          (await (await fetch(`${t.url}/api/admin/feature/message/audit`, { headers: { "svc-open-api-key": k } })).json()) as {
            data: Entry[];
          }
        ).data.length;
      expect(await count()).toBe(1);
      for (const until = Date.now() + 4000; (await count()) > 0 && Date.now() < until;) await new Promise((r) => setTimeout(r, 100));
      expect(await count()).toBe(0);
    } finally {
      await t.close();
    }
  });
});
