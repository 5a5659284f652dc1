// The edges of live push (D46). D53: a credential that ends ends its streams
// (a key revoked by another process, a token past its exp), over SSE, Connect
// and gRPC. D54: fair shares: watchers per credential and address,
// X-Forwarded-For only from a trusted proxy, streams per HTTP/2 connection, and
// a watcher that does not read is dropped.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import * as grpc from "@grpc/grpc-js";
import { connect as h2connect } from "node:http2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FeatureStatusService, WatchMessagesRequestSchema } from "../../src/gen/meridian/featurestatus/v1/feature_status_pb.js";
import { connectClient, grpcStream, hostPort } from "../helpers/clients.js";
import { RW, api, draft } from "../helpers/messages.js";
import { bearer, queryElsewhere, signToken, startTestServer, type TestServer } from "../helpers/server.js";
import { nextEvent, openSse, type SseStream } from "../helpers/sse.js";

const READER = { clientId: "banner", scopes: ["platform_iam_featurestatus_read"] };
const HEARTBEAT_S = 2;
const watch = FeatureStatusService.method.watchMessages;

/** Revokes a key as another process would: through a connection of its own to the database. */
const revokeElsewhere = (server: TestServer, key: string) =>
  queryElsewhere(server, "UPDATE api_keys SET revoked_at = $1 WHERE id = $2", new Date().toISOString(), key.slice(4, 16));

const globalStream = (server: TestServer, headers: Record<string, string>) =>
  openSse(`${server.url}/api/admin/feature/message/stream`, headers);

/** The next event that is not a comment, a retry hint or a set: for the D53 error event. */
async function nextNamed(s: SseStream, ms: number) {
  const end = Date.now() + ms;
  for (;;) {
    const e = await s.next(Math.max(1, end - Date.now()));
    if (e.event) return e;
  }
}

describe("D53 a credential that ends ends its streams", () => {
  let server: TestServer;
  let w: ReturnType<typeof api>;
  beforeAll(async () => {
    server = await startTestServer({ MERIDIAN_SSE_HEARTBEAT_S: String(HEARTBEAT_S) });
    w = api(server, await server.key(RW));
  });
  afterAll(() => server.close());

  it("D53 a key revoked elsewhere ends its SSE stream within one heartbeat: an error event with the problem+json, then the end", async () => {
    const key = await server.key(READER);
    const s = await globalStream(server, { "svc-open-api-key": key });
    try {
      await nextEvent(s);
      await revokeElsewhere(server, key);
      const t0 = performance.now();
      const e = await nextNamed(s, HEARTBEAT_S * 1000 + 2000);
      const took = performance.now() - t0;
      expect(e.event).toBe("error");
      expect(e.id).toBeUndefined(); // the reader keeps the last set's id for its reconnection
      expect(JSON.parse(e.data!)).toMatchObject({
        status: 401,
        code: "unauthenticated",
        reason: "CREDENTIALS_INVALID",
        detail: "invalid or revoked API key",
      });
      expect(await s.ended).toBe("ended");
      expect(took).toBeLessThan(HEARTBEAT_S * 1000 + 1000);
    } finally {
      s.close();
    }
  });

  it("D53 after a revocation no further set is sent: a write right after it brings the error event, not the set", async () => {
    const key = await server.key(READER);
    const s = await globalStream(server, { "svc-open-api-key": key });
    try {
      await nextEvent(s);
      await revokeElsewhere(server, key);
      expect((await w.create(null, draft({ title: "Not for a revoked key" }))).status).toBe(201);
      const e = await nextNamed(s, 1000); // the write wakes the watcher at once
      expect(e.event).toBe("error");
      expect(await s.ended).toBe("ended");
    } finally {
      s.close();
    }
  });

  it("D53 D46 writes elsewhere that keep waking a watcher do not put off its check: a revoked key still ends within one heartbeat", async () => {
    const key = await server.key({ ...READER, clientId: "quiet" });
    const s = await openSse(`${server.url}/api/admin/feature/quiet/message/stream`, { "svc-open-api-key": key });
    let writing = true;
    const writes = (async () => {
      while (writing) {
        await w.create("busy", draft());
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    try {
      await nextEvent(s);
      await revokeElsewhere(server, key);
      const t0 = performance.now();
      expect((await nextNamed(s, HEARTBEAT_S * 1000 + 2000)).event).toBe("error");
      expect(performance.now() - t0).toBeLessThan(HEARTBEAT_S * 1000 + 1000);
    } finally {
      writing = false;
      await writes;
      s.close();
    }
  });

  it("D53 a token ends its SSE stream when it expires, not a heartbeat later", async () => {
    const exp = Math.floor(Date.now() / 1000) + 2;
    const token = await signToken({ sub: "banner", scope: "platform_iam_featurestatus_read" }, { expiresIn: exp });
    const s = await globalStream(server, bearer(token));
    try {
      expect(s.status).toBe(200);
      await nextEvent(s);
      const e = await nextNamed(s, 4000);
      const at = Date.now();
      expect(e.event).toBe("error");
      expect(JSON.parse(e.data!)).toMatchObject({ status: 401, code: "unauthenticated" });
      expect(at).toBeGreaterThanOrEqual(exp * 1000);
      expect(at).toBeLessThan(exp * 1000 + 1000);
      expect(await s.ended).toBe("ended");
    } finally {
      s.close();
    }
  });

  it("D53 WatchMessages over Connect ends with UNAUTHENTICATED when its key is revoked elsewhere", async () => {
    const key = await server.key(READER);
    const client = connectClient(FeatureStatusService, server.url);
    const abort = new AbortController();
    const it = client
      .watchMessages(create(WatchMessagesRequestSchema, {}), { headers: { "svc-open-api-key": key }, signal: abort.signal })
      [Symbol.asyncIterator]();
    try {
      await it.next();
      await revokeElsewhere(server, key);
      const t0 = performance.now();
      const err = await it.next().then(
        () => undefined,
        (e: unknown) => ConnectError.from(e),
      );
      expect(err?.code).toBe(Code.Unauthenticated);
      expect(performance.now() - t0).toBeLessThan(HEARTBEAT_S * 1000 + 1000);
    } finally {
      abort.abort();
    }
  });

  it("D53 WatchMessages over gRPC (grpc-js) ends with UNAUTHENTICATED when its key is revoked elsewhere", async () => {
    const key = await server.key(READER);
    const call = grpcStream(hostPort(server.url), watch, {}, { "svc-open-api-key": key });
    await new Promise((r) => setTimeout(r, 300)); // the first set is sent
    await revokeElsewhere(server, key);
    const t0 = performance.now();
    const { messages, error } = await call;
    expect(messages.length).toBe(1);
    expect(error?.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(performance.now() - t0).toBeLessThan(HEARTBEAT_S * 1000 + 1000);
  });

  it("D53 a live key keeps its stream: heartbeats go on", async () => {
    const s = await globalStream(server, { "svc-open-api-key": await server.key(READER) });
    try {
      await nextEvent(s);
      expect(await s.next(HEARTBEAT_S * 1000 + 1000)).toEqual({ comment: "heartbeat" });
      expect(await s.next(HEARTBEAT_S * 1000 + 1000)).toEqual({ comment: "heartbeat" });
    } finally {
      s.close();
    }
  });
});

describe("D54 fair shares", () => {
  let server: TestServer;
  let proxied: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ MERIDIAN_MAX_WATCHERS_PER_CLIENT: "2" });
    proxied = await startTestServer({ MERIDIAN_MAX_WATCHERS_PER_CLIENT: "2", MERIDIAN_TRUSTED_PROXIES: "10.0.0.0/8, 127.0.0.1" });
  });
  afterAll(() => Promise.all([server.close(), proxied.close()]));

  const refusal = async (r: Response) => ({ status: r.status, retryAfter: r.headers.get("retry-after"), problem: await r.json() });

  it("D54 one credential from one address holds at most MERIDIAN_MAX_WATCHERS_PER_CLIENT watchers: beyond, 429 with Retry-After before any byte; another credential is served", async () => {
    const key = await server.key(READER);
    const open = [await globalStream(server, { "svc-open-api-key": key }), await globalStream(server, { "svc-open-api-key": key })];
    try {
      expect(open.map((s) => s.status)).toEqual([200, 200]);
      const third = await fetch(`${server.url}/api/admin/feature/message/stream`, { headers: { "svc-open-api-key": key } });
      expect(third.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect(await refusal(third)).toMatchObject({
        status: 429,
        retryAfter: "5",
        problem: { status: 429, code: "resource_exhausted", reason: "CLIENT_WATCHERS_EXHAUSTED" },
      });
      // A client's own address in X-Forwarded-For counts for nothing when the peer is no trusted proxy.
      const spoofed = await fetch(`${server.url}/api/admin/feature/message/stream`, {
        headers: { "svc-open-api-key": key, "x-forwarded-for": "198.51.100.7" },
      });
      expect(spoofed.status).toBe(429);
      await spoofed.body?.cancel();
      const grpcRefused = await grpcStream(hostPort(server.url), watch, {}, { "svc-open-api-key": key });
      expect(grpcRefused.messages).toEqual([]);
      expect(grpcRefused.error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
      const other = await globalStream(server, { "svc-open-api-key": await server.key(READER) });
      expect(other.status).toBe(200);
      other.close();
    } finally {
      open.forEach((s) => s.close());
    }
    // The slots come back when the streams end.
    await new Promise((r) => setTimeout(r, 200));
    const again = await globalStream(server, { "svc-open-api-key": key });
    expect(again.status).toBe(200);
    again.close();
  });

  it("D54 behind a trusted proxy each forwarded address has its own share; the nearest untrusted hop counts", async () => {
    const key = await proxied.key(READER);
    const from = (xff: string) => globalStream(proxied, { "svc-open-api-key": key, "x-forwarded-for": xff });
    const open = [await from("203.0.113.1"), await from("198.51.100.9, 203.0.113.1"), await from("203.0.113.2, 10.1.2.3")];
    try {
      expect(open.map((s) => s.status)).toEqual([200, 200, 200]);
      const fourth = await fetch(`${proxied.url}/api/admin/feature/message/stream`, {
        headers: { "svc-open-api-key": key, "x-forwarded-for": "203.0.113.1" },
      });
      expect(fourth.status).toBe(429);
      await fourth.body?.cancel();
    } finally {
      open.forEach((s) => s.close());
    }
  });

  it("D54 an HTTP/2 connection is told it may open at most 100 concurrent streams", async () => {
    const session = h2connect(server.url);
    try {
      const settings = await new Promise<{ maxConcurrentStreams?: number }>((resolve) => session.once("remoteSettings", resolve));
      expect(settings.maxConcurrentStreams).toBe(100);
    } finally {
      session.close();
    }
  });

  it("D54 a trusted proxy that is not an address or CIDR range is a setting error at start", async () => {
    await expect(startTestServer({ MERIDIAN_TRUSTED_PROXIES: "10.0.0.0/33" })).rejects.toThrow(
      'MERIDIAN_TRUSTED_PROXIES=10.0.0.0/33: "10.0.0.0/33" is not an IP address or CIDR range',
    ); // D56: the setting=value, then the cause
  });
});

describe("D54 a watcher that does not read", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ MERIDIAN_WATCHER_QUEUE_KB: "64", MERIDIAN_SSE_HEARTBEAT_S: "1" });
    const w = api(server, await server.key(RW));
    // An active set of about 400 KB: more than the client's HTTP/2 window and the bound.
    for (let i = 0; i < 100; i++) expect((await w.create("big", draft({ title: `m${i}`, body: "x".repeat(4000) }))).status).toBe(201);
  });
  afterAll(() => server.close());

  it("D54 is dropped once more than MERIDIAN_WATCHER_QUEUE_KB waits for it, and the log says so; a reader of the same set is not", async () => {
    const key = await server.key({ ...READER, clientId: "big" });
    const session = h2connect(server.url);
    session.on("error", () => {});
    try {
      const stalled = session.request({ ":path": "/api/admin/feature/big/message/stream", "svc-open-api-key": key });
      stalled.end();
      stalled.pause(); // never read: its HTTP/2 window fills, then the rest waits on the server
      const status = await new Promise<number>((resolve) => stalled.once("response", (h) => resolve(Number(h[":status"]))));
      expect(status).toBe(200);
      const reader = await openSse(`${server.url}/api/admin/feature/big/message/stream`, { "svc-open-api-key": key });
      expect((await nextEvent(reader)).messages).toHaveLength(100);
      const closed = new Promise<number>((resolve) => stalled.once("close", () => resolve(stalled.rstCode)));
      const t0 = performance.now();
      expect(await closed).toBe(8); // RST_STREAM CANCEL
      expect(performance.now() - t0).toBeLessThan(3000); // within a sweep (one heartbeat) and slack
      const line = server.logs.find((l) => typeof l.msg === "string" && l.msg.startsWith("dropped a message watcher"));
      expect(line).toMatchObject({ level: 40, watcher: expect.stringContaining("key ") });
      expect(line!.queuedBytes).toBeGreaterThan(64 * 1024);
      // The reader goes on.
      expect(await reader.next(2500)).toEqual({ comment: "heartbeat" });
      reader.close();
    } finally {
      session.destroy();
    }
  });
});

describe("D57 streams end when the server stops", () => {
  it("D57 a watcher stuck on a client that does not read does not hold the drain: it is cut, a reader's stream ends cleanly", async () => {
    const server = await startTestServer({ MERIDIAN_WATCHER_QUEUE_KB: "1048576" }); // never dropped for not reading
    try {
      const w = api(server, await server.key(RW));
      for (let i = 0; i < 100; i++) expect((await w.create("big", draft({ title: `m${i}`, body: "x".repeat(4000) }))).status).toBe(201);
      const key = await server.key({ ...READER, clientId: "big" });
      const session = h2connect(server.url);
      session.on("error", () => {});
      const stalled = session.request({ ":path": "/api/admin/feature/big/message/stream", "svc-open-api-key": key });
      stalled.on("error", () => {});
      stalled.end();
      stalled.pause();
      await new Promise((resolve) => stalled.once("response", resolve));
      const reader = await openSse(`${server.url}/api/admin/feature/big/message/stream`, { "svc-open-api-key": key });
      await nextEvent(reader);
      await new Promise((r) => setTimeout(r, 200)); // the stalled stream's window is full
      const t0 = performance.now();
      await server.app.close(10_000);
      expect(performance.now() - t0).toBeLessThan(2000);
      expect(await reader.ended).toBe("ended");
      session.destroy();
    } finally {
      await server.close();
    }
  });
});
