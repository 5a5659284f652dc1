// D63 webhooks through a real server on either backend (MERIDIAN_TEST_BACKEND):
// a real HTTP receiver on a local port checks each delivery's signature and
// the order of a message's events; retries, redirects, timeouts, the delivery
// log, and bad registrations (issue 29 item 7).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConnectError } from "@connectrpc/connect";
import { MessageDeliveryService } from "../../src/gen/meridian/featurestatus/v1/message_delivery_pb.js";
import { api, draft, iso, RW } from "../helpers/messages.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { connectClient } from "../helpers/clients.js";

import { SECRET, signatureValid, startReceiver, WEBHOOK_ENV as ENV } from "../helpers/webhooks.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("D63 webhooks", () => {
  let server: TestServer;
  let a: ReturnType<typeof api>;
  beforeAll(async () => {
    server = await startTestServer(ENV);
    a = api(server, await server.key(RW));
  });
  afterAll(() => server.close());

  const register = (body: unknown) => a.call("POST", "/api/admin/feature/message/webhooks", body);
  const deliveries = async (id: string, query = "") =>
    (await a.call("GET", `/api/admin/feature/message/webhooks/${id}/deliveries${query}`)).json.data as Record<string, unknown>[];

  it("D63 every create, update and delete is POSTed signed, in order per message, and the log says delivered", async () => {
    const rx = await startReceiver();
    try {
      const hook = await register({ url: rx.url, secret: SECRET });
      expect(hook.status).toBe(201);
      expect(hook.json.events).toEqual(["message.created", "message.updated", "message.deleted", "message.started", "message.expired"]);
      const m1 = (await a.create("orders", draft({ title: "one" }))).json;
      const m2 = (await a.create(null, draft({ title: "two" }))).json;
      for (let i = 0; i < 5; i++) expect((await a.update("orders", m1.id, { title: `one v${i + 2}` })).status).toBe(200);
      await a.update(null, m2.id, { title: "two v2" });
      expect((await a.remove("orders", m1.id)).status).toBe(204);
      await rx.until(
        (r) =>
          r.filter((x) => x.body.data.message.id === m1.id).length === 7 &&
          r.some((x) => x.body.type === "message.updated" && x.body.data.message.id === m2.id),
      );
      expect(rx.received.every((r) => signatureValid(r))).toBe(true);
      expect(rx.received.some((r) => signatureValid(r, "another-secret-0123456789"))).toBe(false);
      const ofM1 = rx.received.filter((r) => r.body.data.message.id === m1.id);
      expect(ofM1.map((r) => r.body.type)).toEqual(["message.created", ...Array(5).fill("message.updated"), "message.deleted"]);
      expect(ofM1.map((r) => r.body.data.message.title)).toEqual(["one", "one v2", "one v3", "one v4", "one v5", "one v6", "one v6"]);
      expect(ofM1[0].body.data.message.featureId).toBe("orders");
      expect(rx.received.find((r) => r.body.data.message.id === m2.id)!.body.data.message.featureId).toBeNull();
      for (const r of rx.received) {
        expect(r.headers["content-type"]).toBe("application/json");
        expect(r.headers["meridian-event"]).toBe(r.body.type);
        expect(r.headers["meridian-event-id"]).toBe(r.body.id);
      }
      // Ordered per message (event ids rise), each event once in the normal case.
      const ids = ofM1.map((r) => Number(r.body.id));
      expect(ids).toEqual([...ids].sort((x, y) => x - y));
      expect(new Set(rx.received.map((r) => r.body.id)).size).toBe(rx.received.length);
      await sleep(300); // the last outcome is recorded after the answer
      const log = await deliveries(hook.json.id, `?messageId=${m1.id}`);
      expect(log).toHaveLength(7);
      expect(log.map((d) => d.event)).toEqual(["message.deleted", ...Array(5).fill("message.updated"), "message.created"]);
      expect(log.every((d) => d.status === "delivered" && d.attempts === 1 && d.lastStatus === 204)).toBe(true);
    } finally {
      await rx.close();
    }
  });

  it("D63 events filter what an endpoint receives", async () => {
    const rx = await startReceiver();
    try {
      const hook = await register({ url: rx.url, secret: SECRET, events: ["message.deleted"] });
      expect(hook.json.events).toEqual(["message.deleted"]);
      const m = (await a.create("filtered", draft())).json;
      await a.update("filtered", m.id, { title: "changed" });
      await a.remove("filtered", m.id);
      await rx.until((r) => r.some((x) => x.body.data.message.id === m.id));
      await sleep(500);
      expect(rx.received.filter((x) => x.body.data.message.id === m.id).map((x) => x.body.type)).toEqual(["message.deleted"]);
      await a.call("DELETE", `/api/admin/feature/message/webhooks/${hook.json.id}`);
    } finally {
      await rx.close();
    }
  });

  it("D63 a start and an expiry are delivered as message.started and message.expired, once each", async () => {
    const rx = await startReceiver();
    try {
      await register({ url: rx.url, secret: SECRET, events: ["message.started", "message.expired"] });
      const m = (await a.create("clock", draft({ startDate: iso(2), expiringDate: iso(4) }))).json;
      await rx.until((r) => r.some((x) => x.body.type === "message.expired" && x.body.data.message.id === m.id), 12_000);
      await sleep(1500); // later ticks write nothing more
      const mine = rx.received.filter((x) => x.body.data.message.id === m.id);
      expect(mine.map((x) => x.body.type)).toEqual(["message.started", "message.expired"]);
      expect(mine.every((r) => signatureValid(r))).toBe(true);
      // The event happened when the date passed, not when it was noticed.
      expect(mine[0].body.createdAt).toBe(new Date(m.startDate).toISOString());
    } finally {
      await rx.close();
    }
  });

  it("D63 a 500 is tried again with backoff until it is taken; the log keeps status, attempts and at most 1 KB of the answer", async () => {
    const rx = await startReceiver((_r, n) => (n <= 2 ? { status: 500, body: "é".repeat(2000) } : { status: 200, body: "ok" }));
    try {
      const hook = await register({ url: rx.url, secret: SECRET, events: ["message.created"] });
      const m = (await a.create("retry", draft())).json;
      await rx.until((r) => r.length >= 2);
      await sleep(200);
      const failing = (await deliveries(hook.json.id))[0];
      expect(failing).toMatchObject({ status: "pending", lastStatus: 500, messageId: m.id });
      expect(Buffer.byteLength(String(failing.lastAnswer))).toBeLessThanOrEqual(1024);
      expect(String(failing.lastAnswer)).toMatch(/^(é)+$/);
      expect(Date.parse(String(failing.nextAttemptAt))).toBeGreaterThan(Date.parse(String(failing.lastAttemptAt)));
      await rx.until((r) => r.length >= 3);
      // Backoff: the second wait is longer than the first (1 s, then 2 s).
      const [t1, t2, t3] = rx.received.map((r) => r.at);
      expect(t2 - t1).toBeGreaterThanOrEqual(900);
      expect(t3 - t2).toBeGreaterThanOrEqual(1800);
      expect(new Set(rx.received.map((r) => r.body.id)).size).toBe(1); // the same event each time
      await sleep(300);
      expect((await deliveries(hook.json.id))[0]).toMatchObject({ status: "delivered", attempts: 3, lastStatus: 200, lastAnswer: "ok" });
      await a.call("DELETE", `/api/admin/feature/message/webhooks/${hook.json.id}`);
    } finally {
      await rx.close();
    }
  });

  it("D63 a redirect is not followed: it is a failed attempt, tried again later at the same address", async () => {
    const rx = await startReceiver(() => ({ status: 302, headers: { location: "/elsewhere" } }));
    try {
      const hook = await register({ url: rx.url, secret: SECRET, events: ["message.created"] });
      await a.create("redirected", draft());
      await rx.until((r) => r.length >= 1);
      await sleep(300);
      expect(rx.received.every((r) => r.path === "/hook")).toBe(true);
      expect((await deliveries(hook.json.id))[0]).toMatchObject({
        status: "pending",
        lastStatus: 302,
        lastError: "redirect to /elsewhere not followed",
      });
      await a.call("DELETE", `/api/admin/feature/message/webhooks/${hook.json.id}`);
    } finally {
      await rx.close();
    }
  });

  it("D63 an endpoint that does not answer within 5 s is a failed attempt", async () => {
    const rx = await startReceiver(() => "hang");
    try {
      const hook = await register({ url: rx.url, secret: SECRET, events: ["message.created"] });
      await a.create("hanging", draft());
      await rx.until((r) => r.length >= 1);
      const t0 = Date.now();
      let d: Record<string, unknown> | undefined;
      while (Date.now() - t0 < 8000 && !(d = (await deliveries(hook.json.id))[0])?.lastError) await sleep(250);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(4500);
      expect(d).toMatchObject({ status: "pending", attempts: 1, lastError: "no whole answer within 5 s" });
      await a.call("DELETE", `/api/admin/feature/message/webhooks/${hook.json.id}`);
    } finally {
      await rx.close();
    }
  });

  it("D63 a hanging receiver does not delay another endpoint's deliveries (issue 39 item 1)", async () => {
    const hanging = await startReceiver(() => "hang");
    const quick = await startReceiver();
    try {
      const slow = (await register({ url: hanging.url, secret: SECRET, events: ["message.created"] })).json;
      const fast = (await register({ url: quick.url, secret: SECRET, events: ["message.created"] })).json;
      // Each message is a new delivery to the hanging endpoint, which holds it for the whole 5 s timeout.
      const lags: number[] = [];
      for (let i = 0; i < 4; i++) {
        const t0 = Date.now();
        const m = (await a.create("lanes", draft({ title: `lane ${i}` }))).json;
        await quick.until((r) => r.some((x) => x.body.data.message.id === m.id), 4500);
        lags.push(Date.now() - t0);
        await hanging.until((r) => r.some((x) => x.body.data.message.id === m.id), 4500);
      }
      expect(Math.max(...lags)).toBeLessThan(1500);
      expect(hanging.received).toHaveLength(4); // each message's delivery in flight at once, none held behind another
      for (const h of [slow, fast]) await a.call("DELETE", `/api/admin/feature/message/webhooks/${h.id}`);
    } finally {
      await hanging.close();
      await quick.close();
    }
  });

  it("D63 each failed attempt is logged at warn: endpoint, URL without userinfo, event, status, error, and the next attempt or giving up (issue 39 item 13)", async () => {
    const rx = await startReceiver(() => ({ status: 503, body: "busy" }));
    try {
      const hook = (await register({ url: rx.url, secret: SECRET, events: ["message.created"] })).json;
      const m = (await a.create("logged", draft())).json;
      const failures = async (n: number) => {
        const t0 = Date.now();
        const mine = () => server.logs.filter((l) => l.webhookId === hook.id);
        while (mine().length < n && Date.now() - t0 < 8000) await sleep(100);
        return mine();
      };
      const [first] = await failures(1);
      const [event] = await deliveries(hook.id);
      expect(first).toMatchObject({
        level: 40,
        webhookId: hook.id,
        url: rx.url,
        eventId: event.eventId,
        event: "message.created",
        messageId: m.id,
        attempt: 1,
        status: 503,
        nextAttemptAt: expect.any(String),
      });
      expect(String(first.msg)).toMatch(/^webhook delivery failed: HTTP 503; tried again at /);
      // Older than the 24 hours of retries: the next failure is the last.
      await server.query("UPDATE message_events SET at = at - $1 WHERE message_id = $2", 25 * 3600 * 1000, m.id);
      const [, last] = await failures(2);
      expect(last).toMatchObject({ level: 40, webhookId: hook.id, attempt: 2, status: 503, givenUp: true });
      expect(last.nextAttemptAt).toBeUndefined();
      expect(String(last.msg)).toMatch(/given up/);
      expect((await deliveries(hook.id))[0]).toMatchObject({ status: "failed", attempts: 2 });

      // A URL stored with userinfo (registration refuses one) is logged without it, and the error is named.
      const port = new URL(rx.url).port;
      await server.query(
        "INSERT INTO webhooks (id, url, secret, events, created_at) VALUES ($1, $2, $3, $4, $5)",
        "userinfo-hook",
        `http://someone:p4ss@127.0.0.1:${port}/hook`,
        SECRET,
        "message.created",
        Date.now(),
      );
      await a.create("logged", draft());
      const t0 = Date.now();
      let line: Record<string, unknown> | undefined;
      while (!(line = server.logs.find((l) => l.webhookId === "userinfo-hook")) && Date.now() - t0 < 8000) await sleep(100);
      expect(line).toMatchObject({ level: 40, url: `http://127.0.0.1:${port}/hook`, error: expect.any(String) });
      expect(JSON.stringify(server.logs)).not.toContain("p4ss");
      await a.call("DELETE", "/api/admin/feature/message/webhooks/userinfo-hook");
      await a.call("DELETE", `/api/admin/feature/message/webhooks/${hook.id}`);
    } finally {
      await rx.close();
    }
  });

  it("D63 the list never shows a secret; DELETE removes; an unknown id is 404 WEBHOOK_NOT_FOUND", async () => {
    const hook = (await register({ url: "https://hooks.example/x", secret: SECRET })).json;
    const listed = await a.call("GET", "/api/admin/feature/message/webhooks");
    expect(listed.status).toBe(200);
    expect(listed.json.data.find((w: { id: string }) => w.id === hook.id)).toEqual(hook);
    expect(JSON.stringify(listed.json)).not.toContain(SECRET);
    expect((await a.call("DELETE", `/api/admin/feature/message/webhooks/${hook.id}`)).status).toBe(204);
    const again = await a.call("DELETE", `/api/admin/feature/message/webhooks/${hook.id}`);
    expect(again.status).toBe(404);
    expect(again.json.reason).toBe("WEBHOOK_NOT_FOUND");
    expect((await a.call("GET", `/api/admin/feature/message/webhooks/${hook.id}/deliveries`)).status).toBe(404);
  });

  it.each([
    ["http: to a host not in MERIDIAN_WEBHOOK_HTTP_HOSTS", { url: "http://hooks.example/x", secret: SECRET }, "url"],
    ["another scheme", { url: "ftp://127.0.0.1/x", secret: SECRET }, "url"],
    ["not a URL", { url: "hooks.example/x", secret: SECRET }, "url"],
    ["a URL with credentials", { url: "https://u:p@hooks.example/x", secret: SECRET }, "url"],
    ["a short secret", { url: "https://hooks.example/x", secret: "short" }, "secret"],
    ["no secret", { url: "https://hooks.example/x" }, "secret"],
    ["an unknown event", { url: "https://hooks.example/x", secret: SECRET, events: ["message.created", "message.read"] }, "events[1]"],
    ["an unknown field", { url: "https://hooks.example/x", secret: SECRET, retries: 3 }, "retries"],
  ])("D63 a registration with %s is 400 naming the field, and nothing is stored", async (_name, body, field) => {
    const before = (await a.call("GET", "/api/admin/feature/message/webhooks")).json.data;
    const r = await register(body);
    expect(r.status).toBe(400);
    expect(r.headers.get("content-type")).toContain("application/problem+json");
    expect(Object.keys(r.json.errors)).toContain(field);
    expect((await a.call("GET", "/api/admin/feature/message/webhooks")).json.data).toEqual(before);
  });

  it("D63 webhooks are BackOffice's: a reader is 403 on every route, over REST and Connect", async () => {
    const reader = api(server, await server.key({ clientId: "orders", scopes: ["platform_iam_featurestatus_read"] }));
    expect((await reader.call("GET", "/api/admin/feature/message/webhooks")).status).toBe(403);
    expect((await reader.call("POST", "/api/admin/feature/message/webhooks", { url: "https://h.example/x", secret: SECRET })).status).toBe(
      403,
    );
    const client = connectClient(MessageDeliveryService, server.url);
    const err = await client
      .listWebhooks(
        {},
        { headers: { "svc-open-api-key": await server.key({ clientId: "orders", scopes: ["platform_iam_featurestatus_read"] }) } },
      )
      .catch((e: unknown) => e);
    expect(ConnectError.from(err).rawMessage).toMatch(/BackOffice/);
  });

  it("D63 CreateWebhook and ListWebhookDeliveries over Connect", async () => {
    const rx = await startReceiver();
    try {
      const client = connectClient(MessageDeliveryService, server.url);
      const headers = { "svc-open-api-key": await server.key(RW) };
      const hook = await client.createWebhook({ url: rx.url, secret: SECRET, events: ["message.created"] }, { headers });
      const m = (await a.create("connect", draft())).json;
      await rx.until((r) => r.some((x) => x.body.data.message.id === m.id));
      await sleep(300);
      const log = await client.listWebhookDeliveries({ webhookId: hook.id, messageId: m.id }, { headers });
      expect(log.data).toHaveLength(1);
      expect(log.data[0]).toMatchObject({ event: "message.created", status: "delivered", attempts: 1 });
      await client.deleteWebhook({ webhookId: hook.id }, { headers });
    } finally {
      await rx.close();
    }
  });

  it("D63 events older than the audit's retention, their deliveries over, are deleted with their log by the cleanup", async () => {
    const s2 = await startTestServer({ ...ENV, MERIDIAN_CLEANUP_INTERVAL_S: "1" });
    const rx = await startReceiver();
    try {
      const b = api(s2, await s2.key(RW));
      const hook = (await b.call("POST", "/api/admin/feature/message/webhooks", { url: rx.url, secret: SECRET })).json;
      const old = (await b.create("aging", draft())).json;
      await rx.until((r) => r.length >= 1);
      await sleep(300);
      await s2.query("UPDATE message_events SET at = at - $1", 400 * 86_400_000); // past the 365 days
      const recent = (await b.create("aging", draft())).json;
      await rx.until((r) => r.length >= 2);
      await sleep(2500); // the cleanup runs every second here
      const log = (await b.call("GET", `/api/admin/feature/message/webhooks/${hook.id}/deliveries`)).json.data;
      expect(log.map((d: { messageId: number }) => d.messageId)).toEqual([recent.id]);
      const left = await s2.query<{ message_id: number }>("SELECT message_id FROM message_events");
      expect(left.map((e) => e.message_id)).toEqual([recent.id]);
      expect(old.id).not.toBe(recent.id);
    } finally {
      await rx.close();
      await s2.close();
    }
  });
});
