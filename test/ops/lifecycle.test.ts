// D32 health and graceful shutdown, D34 request logs, D36 CORS, D4 TLS.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { connect as h2connect } from "node:http2";
import { get as httpsGet } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { secretOf, startTestServer, type TestServer } from "../helpers/server.js";
import { inServingState } from "../helpers/serving-state.js";
import { selfSignedCert } from "../helpers/tls.js";
import { exited, meridian, serve } from "../helpers/cli.js";
import { draft } from "../helpers/messages.js";
import { nextEvent, openSse } from "../helpers/sse.js";

const dir = mkdtempSync(join(tmpdir(), "meridian-life-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("D32 health", () => {
  it("D32 /healthz answers 200 {status: ok} once serving, and a drained server accepts no new connection", async () => {
    const server = await startTestServer();
    const r = await fetch(`${server.url}/healthz`);
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ status: "ok" });
    await server.app.close(2000);
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
    rmSync(server.dir, { recursive: true, force: true });
  });

  it.each(["starting", "draining"] as const)("D32 /healthz answers 503 while %s", async (state) => {
    await inServingState(state, [], async (url) => {
      const r = await fetch(`${url}/healthz`);
      expect(r.status).toBe(503);
      expect(await r.json()).toEqual({ status: state });
    });
  });

  it("D32 SIGTERM finishes a request in flight, then exits and closes the database", async () => {
    const db = join(dir, "sigterm.db");
    expect(meridian(["init"], { MERIDIAN_DB: db }).status).toBe(0);
    const key = meridian(
      ["apikey", "create", "--client-id", "t", "--scope", "platform_iam_featurestatus_readwrite", "--role", "BackOffice"],
      { MERIDIAN_DB: db },
    ).stdout.trim();
    const { child, url, stderr } = await serve({ MERIDIAN_DB: db });
    const answer = await postAcrossSigterm(url, key, child, "Sent across SIGTERM");
    expect(answer.status).toBe(201);
    expect(JSON.parse(answer.body)).toMatchObject({ id: 1, type: "Warning", title: "Sent across SIGTERM" });
    expect(await exited(child)).toBe(0);
    expect(stderr()).toContain("Meridian stopped");
    // A cleanly closed WAL database leaves no -wal file behind.
    expect(existsSync(`${db}-wal`)).toBe(false);
  });
});

describe("D57 drain", () => {
  it("D57 SIGTERM with 100 open streams: they end at once, a request in flight is still answered, and the process is gone within 2 s", async () => {
    const db = join(dir, "streams.db");
    expect(meridian(["init"], { MERIDIAN_DB: db }).status).toBe(0); // only serve and init create a database (D56)
    const key = meridian(
      ["apikey", "create", "--client-id", "t", "--scope", "platform_iam_featurestatus_readwrite", "--role", "BackOffice"],
      { MERIDIAN_DB: db },
    ).stdout.trim();
    const { child, url } = await serve({ MERIDIAN_DB: db });
    const streams = await Promise.all(
      Array.from({ length: 100 }, () => openSse(`${url}/api/admin/feature/message/stream`, { "svc-open-api-key": key })),
    );
    try {
      expect(streams.every((s) => s.status === 200)).toBe(true);
      await Promise.all(streams.map((s) => nextEvent(s)));
      const t0 = performance.now();
      const answer = await postAcrossSigterm(url, key, child, "Sent while streams end");
      expect(answer.status).toBe(201);
      expect(await exited(child)).toBe(0);
      expect(performance.now() - t0).toBeLessThan(2000);
      // Ended, not cut: a reader reconnects (with Last-Event-ID) to another replica.
      expect(new Set(await Promise.all(streams.map((s) => s.ended)))).toEqual(new Set(["ended"]));
    } finally {
      streams.forEach((s) => s.close());
      child.kill("SIGKILL");
    }
  });
});

/**
 * A request whose body is still arriving when SIGTERM comes: SIGTERM 200 ms
 * after its first bytes, the rest 300 ms later. Resolves with its answer.
 */
function postAcrossSigterm(url: string, key: string, child: ChildProcess, title: string): Promise<{ status: number; body: string }> {
  const body = JSON.stringify(draft({ title }));
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}/api/admin/feature/message`, {
      method: "POST",
      headers: { "content-type": "application/json", "svc-open-api-key": key, "transfer-encoding": "chunked" },
    });
    req.on("response", (res) => {
      let text = "";
      res.on("data", (d: Buffer) => (text += d.toString()));
      res.on("end", () => resolve({ status: res.statusCode!, body: text }));
    });
    req.on("error", reject);
    req.write(body.slice(0, 20));
    setTimeout(() => {
      child.kill("SIGTERM");
      setTimeout(() => req.end(body.slice(20)), 300);
    }, 200);
  });
}

describe("D34 request logs", () => {
  let server: TestServer;
  beforeAll(async () => (server = await startTestServer()));
  afterAll(() => server.close());

  it("D34 one JSON line per request with method, path, status, duration and client id, never a credential or a body", async () => {
    const key = await server.key({ clientId: "logged", scopes: ["platform_iam_featurestatus_readwrite"], roles: ["BackOffice"] });
    const secretBody = JSON.stringify({ message: { title: "very-secret-title-text" } });
    await fetch(`${server.url}/api/admin/feature/message?cursor=abc`, {
      method: "POST",
      headers: { "svc-open-api-key": key, "content-type": "application/json" },
      body: secretBody,
    });
    await new Promise((r) => setTimeout(r, 50));
    const line = server.logs.find((l) => l.msg === "request" && l.clientId === "logged");
    expect(line).toMatchObject({ method: "POST", path: "/api/admin/feature/message", clientId: "logged" });
    expect(typeof line!.status).toBe("number");
    expect(typeof line!.durationMs).toBe("number");
    const all = JSON.stringify(server.logs);
    expect(all).not.toContain(key);
    expect(all).not.toContain(secretOf(key));
    expect(all).not.toContain("very-secret-title-text");
  });
});

describe("D36 CORS", () => {
  let server: TestServer;
  beforeAll(async () => (server = await startTestServer({ MERIDIAN_CORS_ORIGINS: "https://app.example, https://admin.example" })));
  afterAll(() => server.close());

  it("D36 a preflight from an allowed origin is answered with methods and the spec's headers", async () => {
    const r = await fetch(`${server.url}/api/admin/feature/message`, {
      method: "OPTIONS",
      headers: {
        origin: "https://app.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": "svc-open-api-key, content-type",
      },
    });
    expect(r.status).toBe(204);
    expect(r.headers.get("access-control-allow-origin")).toBe("https://app.example");
    expect(r.headers.get("access-control-allow-methods")).toContain("PATCH");
    const allowed = r.headers.get("access-control-allow-headers")!;
    for (const h of [
      "svc-open-api-key",
      "svc-service-id",
      "svc-project-id",
      "svc-dataset-id",
      "api-version",
      "authorization",
      "content-type",
      "connect-protocol-version",
      "x-grpc-web",
    ]) {
      expect(allowed).toContain(h);
    }
  });

  it("D36 responses to an allowed origin carry CORS headers; other origins get none", async () => {
    const ok = await fetch(`${server.url}/healthz`, { headers: { origin: "https://admin.example" } });
    expect(ok.headers.get("access-control-allow-origin")).toBe("https://admin.example");
    const other = await fetch(`${server.url}/healthz`, { headers: { origin: "https://evil.example" } });
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
    const pre = await fetch(`${server.url}/api/admin/feature/message`, {
      method: "OPTIONS",
      headers: { origin: "https://evil.example", "access-control-request-method": "POST" },
    });
    expect(pre.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("D36 D44 D62 an answer that varies on the origin, on Accept-Encoding and on Accept-Language says all three", async () => {
    const key = await server.key({ scopes: ["platform_iam_featurestatus_read"] });
    for (const acceptEncoding of ["identity", "gzip"]) {
      const r = await fetch(`${server.url}/api/admin/feature/message`, {
        headers: { origin: "https://app.example", "svc-open-api-key": key, "accept-encoding": acceptEncoding },
      });
      expect(r.status).toBe(200);
      const vary = (r.headers.get("vary") ?? "").split(",").map((v) => v.trim().toLowerCase());
      expect([acceptEncoding, vary.sort()]).toEqual([acceptEncoding, ["accept-encoding", "accept-language", "origin"]]);
    }
    // Refused: the answer still varies on the origin.
    const refused = await fetch(`${server.url}/api/admin/feature/message`, { headers: { origin: "https://app.example" } });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("vary")).toMatch(/origin/i);
  });
});

describe("D4 TLS", () => {
  const tlsFiles = selfSignedCert(dir);
  const haveOpenssl = tlsFiles !== undefined;
  const { cert, key } = tlsFiles ?? { cert: "", key: "" };

  it.skipIf(!haveOpenssl)("D4 with MERIDIAN_TLS_CERT and _KEY the port serves HTTPS over HTTP/1.1 and HTTP/2", async () => {
    const server = await startTestServer({ MERIDIAN_TLS_CERT: cert, MERIDIAN_TLS_KEY: key });
    try {
      expect(server.url).toMatch(/^https:/);
      const ca = readFileSync(cert);
      const h1 = await new Promise<string>((resolve, reject) => {
        httpsGet(`${server.url}/healthz`, { ca }, (res) => {
          let b = "";
          res.on("data", (d: Buffer) => (b += d.toString()));
          res.on("end", () => resolve(b));
        }).on("error", reject);
      });
      expect(JSON.parse(h1)).toEqual({ status: "ok" });
      const session = h2connect(server.url, { ca });
      const h2 = await new Promise<number>((resolve, reject) => {
        const s = session.request({ ":path": "/healthz" });
        s.on("response", (h) => resolve(Number(h[":status"])));
        s.on("error", reject);
        s.end();
      });
      session.close();
      expect(h2).toBe(200);
    } finally {
      await server.close();
    }
  });
});
