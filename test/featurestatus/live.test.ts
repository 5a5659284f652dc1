// D46 live push: SSE at .../message/stream and the WatchMessages RPC give the
// active messages (the NonExpired listing, D13 rules) at once, then the whole
// set again whenever it changes, by a write or by the clock; event ids and
// Last-Event-ID; heartbeats; a bound on watchers.
import { create } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FeatureStatusService, WatchMessagesRequestSchema } from "../../src/gen/meridian/featurestatus/v1/feature_status_pb.js";
import { connectClient } from "../helpers/clients.js";
import { RW, api, draft, iso } from "../helpers/messages.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { nextEvent, openSse } from "../helpers/sse.js";
import { createParser, type EventSourceMessage } from "eventsource-parser";

let server: TestServer;
let writer: string;
let w: ReturnType<typeof api>;
beforeAll(async () => {
  server = await startTestServer({ MERIDIAN_SSE_HEARTBEAT_S: "1", MERIDIAN_MAX_WATCHERS: "3" });
  writer = await server.key(RW);
  w = api(server, writer);
});
afterAll(() => server.close());

const stream = (feature: string | null, headers: Record<string, string> = {}) =>
  openSse(`${server.url}/api/admin/feature/${feature === null ? "" : `${feature}/`}message/stream`, {
    "svc-open-api-key": writer,
    ...headers,
  });

describe("D59 SSE for every client", () => {
  it("D59 a parser of the format (eventsource-parser) reads no event with empty data; the retry hint comes with the first event", async () => {
    await w.create("parsed", draft({ title: "Parsed" }));
    const abort = new AbortController();
    const r = await fetch(`${server.url}/api/admin/feature/parsed/message/stream`, {
      headers: { "svc-open-api-key": writer },
      signal: abort.signal,
    });
    const events: EventSourceMessage[] = [];
    const retries: number[] = [];
    const comments: string[] = [];
    const parser = createParser({ onEvent: (e) => events.push(e), onRetry: (ms) => retries.push(ms), onComment: (c) => comments.push(c) });
    const reader = r.body!.getReader();
    const decoder = new TextDecoder();
    try {
      // Until the first set and a heartbeat (1 s here) have come.
      while (events.length === 0 || !comments.some((c) => c.includes("heartbeat"))) {
        const { value, done } = await reader.read();
        if (done) break;
        parser.feed(decoder.decode(value, { stream: true }));
      }
    } finally {
      abort.abort();
    }
    expect(events.length).toBeGreaterThanOrEqual(1);
    for (const e of events) {
      expect(e.data, "an event with data").not.toBe("");
      expect(() => JSON.parse(e.data)).not.toThrow();
    }
    expect(events[0].event).toBe("messages");
    expect(JSON.parse(events[0].data).data.map((m: { title: string }) => m.title)).toEqual(["Parsed"]);
    expect(retries).toEqual([2000]);
  });
});

describe("D46 live push", () => {
  it("D46 SSE: the active set on connect, then the whole set after each write, within a fraction of a second", async () => {
    await w.create("live", draft({ title: "Before" }));
    const s = await stream("live");
    try {
      expect(s.status).toBe(200);
      expect(s.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
      expect(s.headers.get("content-encoding")).toBeNull();
      expect(await s.next()).toEqual({ comment: "stream open" });
      const first = await nextEvent(s);
      expect(first.event).toBe("messages");
      expect(first.retry).toBe("2000"); // in the first event, not a block of its own (D59)
      expect(first.messages.map((m) => m.title)).toEqual(["Before"]);
      const t0 = performance.now();
      const created = await w.create("live", draft({ title: "After" }));
      const second = await nextEvent(s);
      expect(performance.now() - t0).toBeLessThan(500);
      expect(second.messages.map((m) => m.title).sort()).toEqual(["After", "Before"]);
      expect(second.id).not.toBe(first.id);
      expect(JSON.parse(second.data!).data.find((m: { id: number }) => m.id === created.json.id)).toEqual(created.json); // REST's message JSON
      await w.remove("live", created.json.id);
      expect((await nextEvent(s)).id).toBe(first.id); // the same set has the same id
    } finally {
      s.close();
    }
  });

  it("D46 D19 the set changes by the clock: a message arrives when its window opens and leaves when it closes", async () => {
    const s = await stream("clock");
    try {
      expect((await nextEvent(s)).messages).toEqual([]);
      await w.create("clock", draft({ title: "Soon", startDate: iso(2), expiringDate: iso(4) }));
      const opened = await nextEvent(s, 4000);
      expect(opened.messages.map((m) => m.title)).toEqual(["Soon"]);
      expect((await nextEvent(s, 4000)).messages).toEqual([]);
    } finally {
      s.close();
    }
  });

  it("D46 Last-Event-ID resumes: no repeat of the set the caller has, the next change comes", async () => {
    const s1 = await stream("resume");
    const first = await nextEvent(s1);
    s1.close();
    const s2 = await stream("resume", { "last-event-id": first.id! });
    try {
      await w.create("resume", draft({ title: "Missed nothing" }));
      const next = await nextEvent(s2);
      expect(next.messages.map((m) => m.title)).toEqual(["Missed nothing"]);
    } finally {
      s2.close();
    }
  });

  it("D46 a quiet stream gets heartbeat comments", async () => {
    const s = await stream("quiet");
    try {
      await nextEvent(s);
      expect(await s.next(2500)).toEqual({ comment: "heartbeat" });
    } finally {
      s.close();
    }
  });

  it("D46 watchers are bounded per process: beyond MERIDIAN_MAX_WATCHERS a 503 problem+json with Retry-After", async () => {
    const open = [await stream("a"), await stream("b"), await stream("c")];
    try {
      const refused = await fetch(`${server.url}/api/admin/feature/d/message/stream`, { headers: { "svc-open-api-key": writer } });
      expect(refused.status).toBe(503);
      expect(refused.headers.get("retry-after")).toBe("5");
      expect(await refused.json()).toMatchObject({ status: 503, code: "unavailable" });
    } finally {
      open.forEach((s) => s.close());
    }
    // Released when the callers go away.
    await new Promise((r) => setTimeout(r, 200));
    const again = await stream("e");
    expect(again.status).toBe(200);
    again.close();
  });

  it("D13 D46 the listing's rules: no credentials 401, another feature's client 403, a global stream for any reader", async () => {
    expect((await fetch(`${server.url}/api/admin/feature/x/message/stream`)).status).toBe(401);
    const shop = await server.key({ clientId: "shop", scopes: ["platform_iam_featurestatus_read"] });
    expect((await fetch(`${server.url}/api/admin/feature/billing/message/stream`, { headers: { "svc-open-api-key": shop } })).status).toBe(
      403,
    );
    await new Promise((r) => setTimeout(r, 100));
    const global = await openSse(`${server.url}/api/admin/feature/message/stream`, { "svc-open-api-key": shop });
    expect(global.status).toBe(200);
    global.close();
  });

  it("D46 WatchMessages over Connect: the set, then the changed set", async () => {
    await new Promise((r) => setTimeout(r, 100));
    const client = connectClient(FeatureStatusService, server.url);
    const abort = new AbortController();
    const it = client
      .watchMessages(create(WatchMessagesRequestSchema, { featureId: "rpc" }), {
        headers: { "svc-open-api-key": writer },
        signal: abort.signal,
      })
      [Symbol.asyncIterator]();
    try {
      const first = await it.next();
      expect(first.value.data).toEqual([]);
      await w.create("rpc", draft({ title: "Pushed" }));
      const second = await it.next();
      expect(second.value.data.map((m: { title: string }) => m.title)).toEqual(["Pushed"]);
      expect(second.value.eventId).not.toBe(first.value.eventId);
    } finally {
      abort.abort();
    }
  });
});
