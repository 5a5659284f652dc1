// D13 authorisation of the message routes, with API keys and JWTs.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, signToken, startTestServer, type TestServer } from "../helpers/server.js";
import { draft, RW } from "../helpers/messages.js";

let server: TestServer;
beforeAll(async () => (server = await startTestServer()));
afterAll(() => server.close());

async function status(
  method: string,
  path: string,
  headers: Record<string, string> | Promise<Record<string, string>>,
  body?: unknown,
): Promise<number> {
  const r = await fetch(server.url + path, {
    method,
    headers: { ...(await headers), "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return r.status;
}
const key = async (grant: Parameters<TestServer["key"]>[0]) => ({ "svc-open-api-key": await server.key(grant) });

describe("D13 message access", () => {
  it("D13 listing needs the read or readwrite scope", async () => {
    expect(await status("GET", "/api/admin/feature/message", key({ scopes: [] }))).toBe(403);
    expect(await status("GET", "/api/admin/feature/message", key({ scopes: ["platform_timeseries_read"] }))).toBe(403);
    expect(await status("GET", "/api/admin/feature/message", key({ scopes: ["platform_iam_featurestatus_read"] }))).toBe(200);
    expect(await status("GET", "/api/admin/feature/message", key({ scopes: ["platform_iam_featurestatus_readwrite"] }))).toBe(200);
  });

  it("D13 outside BackOffice a caller lists only the feature its client id names (403 otherwise)", async () => {
    const app = key({ clientId: "shop", scopes: ["platform_iam_featurestatus_read"] });
    expect(await status("GET", "/api/admin/feature/shop/message", app)).toBe(200);
    expect(await status("GET", "/api/admin/feature/billing/message", app)).toBe(403);
    const office = key({ clientId: "ops", roles: ["BackOffice"], scopes: ["platform_iam_featurestatus_read"] });
    expect(await status("GET", "/api/admin/feature/billing/message", office)).toBe(200);
  });

  it("D13 the same rule with JWT claims", async () => {
    const token = await signToken({ client_id: "shop", scope: "openid platform_iam_featurestatus_read" });
    expect(await status("GET", "/api/admin/feature/shop/message", bearer(token))).toBe(200);
    expect(await status("GET", "/api/admin/feature/billing/message", bearer(token))).toBe(403);
    const office = await signToken({ client_id: "x", scp: ["platform_iam_featurestatus_read"], roles: ["BackOffice"] });
    expect(await status("GET", "/api/admin/feature/billing/message", bearer(office))).toBe(200);
  });

  it("D13 writes need the readwrite scope and the BackOffice role", async () => {
    const cases: [Record<string, string> | Promise<Record<string, string>>, number][] = [
      [key({ roles: ["BackOffice"], scopes: ["platform_iam_featurestatus_read"] }), 403],
      [key({ roles: [], scopes: ["platform_iam_featurestatus_readwrite"], clientId: "f1" }), 403],
      [key(RW), 201],
      [bearer(await signToken({ client_id: "x", scope: "platform_iam_featurestatus_readwrite", role: "BackOffice" })), 201],
      [bearer(await signToken({ client_id: "x", scope: "platform_iam_featurestatus_readwrite" })), 403],
    ];
    for (const [headers, want] of cases) {
      expect(await status("POST", "/api/admin/feature/f1/message", headers, draft())).toBe(want);
      expect(await status("POST", "/api/admin/feature/message", headers, draft())).toBe(want);
    }
    const id = (
      (await (
        await fetch(server.url + "/api/admin/feature/message", {
          method: "POST",
          headers: { ...(await key(RW)), "content-type": "application/json" },
          body: JSON.stringify(draft()),
        })
      ).json()) as { id: number }
    ).id;
    const reader = key({ roles: ["BackOffice"], scopes: ["platform_iam_featurestatus_read"] });
    expect(await status("PATCH", `/api/admin/feature/message/${id}`, reader, { title: "x" })).toBe(403);
    expect(await status("DELETE", `/api/admin/feature/message/${id}`, reader)).toBe(403);
  });

  it("D13 401 for missing or bad credentials on every route", async () => {
    for (const [m, p] of [
      ["GET", "/api/admin/feature/f/message"],
      ["POST", "/api/admin/feature/f/message"],
      ["PATCH", "/api/admin/feature/f/message/1"],
      ["DELETE", "/api/admin/feature/message/1"],
    ]) {
      expect(await status(m, p, {}, m === "POST" || m === "PATCH" ? draft() : undefined)).toBe(401);
      expect(await status(m, p, bearer("not.a.jwt"))).toBe(401);
    }
  });
});
