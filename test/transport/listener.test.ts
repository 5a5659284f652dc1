// D51 every socket and HTTP/2 session of the one-port listener (D4) has idle,
// header and request timeouts; D4 the protocol is chosen on enough bytes.
// Real sockets against a real server with one-second timeouts. A test waits
// for the server to close a connection and fails when it has not after a few
// times the timeout (no timing is a pass/fail threshold beyond that).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import http2 from "node:http2";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import tls from "node:tls";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { selfSignedCert } from "../helpers/tls.js";

const TIMEOUTS = { MERIDIAN_IDLE_TIMEOUT_S: "1", MERIDIAN_HEADERS_TIMEOUT_S: "1", MERIDIAN_REQUEST_TIMEOUT_S: "3" };
/** Long enough after the largest timeout (3 s) that a connection still open is one left open. */
const GIVE_UP_MS = 9000;
const H2_PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Outcome {
  closed: boolean;
  text: string;
}

/** What the server sent, and whether it closed the connection within `ms`. */
function outcome(socket: net.Socket, ms = GIVE_UP_MS): Promise<Outcome> {
  let text = "";
  socket.on("data", (d: Buffer) => (text += d.toString("latin1")));
  socket.on("error", () => {});
  return new Promise((resolve) => {
    if (socket.destroyed) return resolve({ closed: true, text });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ closed: false, text });
    }, ms);
    socket.once("close", () => {
      clearTimeout(timer);
      resolve({ closed: true, text });
    });
  });
}

function connectRaw(url: string): Promise<net.Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const s = net.connect(Number(port), hostname, () => resolve(s));
    s.once("error", reject);
  });
}

/** Resolves true when the session closes within `ms`, false otherwise (then destroys it). */
function sessionClosed(session: http2.ClientHttp2Session, ms = GIVE_UP_MS): Promise<boolean> {
  session.on("error", () => {});
  return new Promise((resolve) => {
    if (session.closed || session.destroyed) return resolve(true);
    const timer = setTimeout(() => {
      session.destroy();
      resolve(false);
    }, ms);
    session.once("close", () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

function h2Get(session: http2.ClientHttp2Session, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const s = session.request({ ":path": path });
    let status = 0;
    let body = "";
    s.on("response", (h) => (status = Number(h[":status"])));
    s.on("data", (d: Buffer) => (body += d.toString()));
    s.on("end", () => resolve({ status, body }));
    s.on("error", reject);
    s.end();
  });
}

/** A Connect server-stream call of grpc.health.v1.Health/Watch: one frame, then silence until the state changes. */
const WATCH_BODY = Buffer.concat([Buffer.from([0, 0, 0, 0, 2]), Buffer.from("{}")]);
const watchRequest = (host: string) =>
  `POST /grpc.health.v1.Health/Watch HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/connect+json\r\nContent-Length: ${WATCH_BODY.length}\r\n\r\n`;

describe("D51 timeouts on cleartext connections", () => {
  let server: TestServer;
  let host: string;
  beforeAll(async () => {
    server = await startTestServer(TIMEOUTS);
    host = new URL(server.url).host;
  });
  afterAll(() => server.close());

  it("D51 a socket that sends nothing is closed", async () => {
    const r = await outcome(await connectRaw(server.url));
    expect(r).toEqual({ closed: true, text: "" });
  });

  it("D51 a socket that sends part of the HTTP/2 preface and stops is closed", async () => {
    const s = await connectRaw(server.url);
    s.write("PRI * HTTP/2.0\r\n");
    expect((await outcome(s)).closed).toBe(true);
  });

  it("D51 an incomplete HTTP/1.1 header is answered 408 and the connection closed", async () => {
    const s = await connectRaw(server.url);
    s.write(`GET /healthz HTTP/1.1\r\nHost: ${host}\r\n`);
    const r = await outcome(s);
    expect(r.closed).toBe(true);
    expect(r.text).toMatch(/^HTTP\/1\.1 408 /);
  });

  it("D51 a header trickled byte by byte is cut at the headers timeout, however active the socket", async () => {
    const s = await connectRaw(server.url);
    const done = outcome(s);
    const header = `GET /healthz HTTP/1.1\r\nHost: ${host}\r\nX-Slow: ${"a".repeat(200)}\r\n\r\n`;
    let closed = false;
    s.once("close", () => (closed = true));
    for (const ch of header) {
      if (closed) break;
      s.write(ch);
      await pause(100);
    }
    const r = await done;
    expect(r.closed).toBe(true);
    expect(r.text).toMatch(/^HTTP\/1\.1 408 /);
  }, 30_000);

  it("D51 a request body that stops arriving is answered 408 at the request timeout and the connection closed", async () => {
    const s = await connectRaw(server.url);
    s.write(`POST /grpc.health.v1.Health/Check HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n{`);
    const r = await outcome(s);
    expect(r.closed).toBe(true);
    expect(r.text).toMatch(/^HTTP\/1\.1 408 /);
  });

  it("D51 an idle HTTP/1.1 keep-alive connection is closed after its answer", async () => {
    const s = await connectRaw(server.url);
    s.write(`GET /healthz HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
    const r = await outcome(s);
    expect(r.closed).toBe(true);
    expect(r.text).toMatch(/^HTTP\/1\.1 200 /);
    expect(r.text).toContain('{"status":"ok"}');
  });

  it("D51 a socket that sends only the HTTP/2 preface is closed", async () => {
    const s = await connectRaw(server.url);
    s.write(H2_PREFACE);
    expect((await outcome(s)).closed).toBe(true);
  });

  it("D51 an idle HTTP/2 session is closed after its last stream", async () => {
    const session = http2.connect(server.url);
    expect(await h2Get(session, "/healthz")).toEqual({ status: 200, body: '{"status":"ok"}' });
    expect(await sessionClosed(session)).toBe(true);
  });

  it("D51 an HTTP/2 request whose body never ends is reset at the request timeout", async () => {
    const session = http2.connect(server.url);
    session.on("error", () => {});
    try {
      const stream = session.request(
        { ":method": "POST", ":path": "/grpc.health.v1.Health/Check", "content-type": "application/json" },
        { endStream: false },
      );
      stream.write("{");
      const end = await new Promise<string>((resolve) => {
        const timer = setTimeout(() => resolve("still open"), GIVE_UP_MS);
        stream.on("error", () => {});
        stream.resume();
        stream.once("close", () => {
          clearTimeout(timer);
          resolve(`closed ${stream.rstCode}`);
        });
      });
      expect(end).toBe(`closed ${http2.constants.NGHTTP2_CANCEL}`);
    } finally {
      session.destroy();
    }
  });

  it('D4 an HTTP/1.1 request whose first segment is only "P" is served as HTTP/1.1', async () => {
    const s = await connectRaw(server.url);
    const r = outcome(s);
    s.write("P");
    await pause(300);
    // Written, not ended: a client's FIN before the answer aborts the request (Node's HTTP server), and
    // the health check's answer waits on the database (readiness, D57), a round trip on PostgreSQL.
    s.write(
      `OST /grpc.health.v1.Health/Check HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
    );
    const { text } = await r;
    expect(text).toMatch(/^HTTP\/1\.1 200 /);
    expect(text.slice(text.indexOf("\r\n\r\n") + 4)).toBe('{"status":"SERVING"}');
  });

  it("D51 a slow but progressing request within the request timeout is served", async () => {
    const s = await connectRaw(server.url);
    const r = outcome(s);
    // Headers in two pieces within the headers timeout, then the body over about twice the idle timeout.
    s.write(`POST /grpc.health.v1.Health/Check HTTP/1.1\r\nHost: ${host}\r\n`);
    await pause(400);
    s.write("Content-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n");
    await pause(1000);
    s.write("{");
    await pause(1000);
    s.write("}");
    const { text } = await r;
    expect(text).toMatch(/^HTTP\/1\.1 200 /);
    expect(text.slice(text.indexOf("\r\n\r\n") + 4)).toBe('{"status":"SERVING"}');
  });

  it("D51 a long streamed HTTP/1.1 answer is cut by neither the request nor the idle timeout", async () => {
    const s = await connectRaw(server.url);
    const r = outcome(s, 5000); // longer than the request timeout (3 s) and the idle timeout (1 s)
    s.write(watchRequest(host));
    s.write(WATCH_BODY);
    const { closed, text } = await r;
    expect(closed).toBe(false);
    expect(text).toMatch(/^HTTP\/1\.1 200 /);
    expect(text).toContain('{"status":"SERVING"}');
  });

  it("D51 a long HTTP/2 stream is cut by neither timeout, and the session closes once it ends", async () => {
    const session = http2.connect(server.url);
    session.on("error", () => {});
    const stream = session.request({
      ":method": "POST",
      ":path": "/grpc.health.v1.Health/Watch",
      "content-type": "application/connect+json",
    });
    stream.end(WATCH_BODY);
    let body = "";
    stream.on("data", (d: Buffer) => (body += d.toString("latin1")));
    let streamClosed = false;
    stream.once("close", () => (streamClosed = true));
    await pause(5000);
    expect(body).toContain('{"status":"SERVING"}');
    expect(streamClosed).toBe(false);
    expect(session.closed || session.destroyed).toBe(false);
    stream.close();
    expect(await sessionClosed(session)).toBe(true);
  }, 20_000);
});

describe("D51 timeouts on TLS connections", () => {
  const dir = mkdtempSync(join(tmpdir(), "meridian-listener-"));
  const tlsFiles = selfSignedCert(dir);
  const haveOpenssl = tlsFiles !== undefined;
  const { cert, key } = tlsFiles ?? { cert: "", key: "" };
  let server: TestServer;
  beforeAll(async () => {
    if (haveOpenssl) server = await startTestServer({ ...TIMEOUTS, MERIDIAN_TLS_CERT: cert, MERIDIAN_TLS_KEY: key });
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const tlsConnect = (alpn: string) =>
    new Promise<tls.TLSSocket>((resolve, reject) => {
      const { port } = new URL(server.url);
      const s = tls.connect({ host: "127.0.0.1", port: Number(port), ca: readFileSync(cert), ALPNProtocols: [alpn] }, () => resolve(s));
      s.once("error", reject);
    });

  it.skipIf(!haveOpenssl)("D51 a TLS socket that never starts its handshake is closed", async () => {
    expect((await outcome(await connectRaw(server.url))).closed).toBe(true);
  });

  it.skipIf(!haveOpenssl)("D51 an incomplete HTTP/1.1 header over TLS is answered 408 and the connection closed", async () => {
    const s = await tlsConnect("http/1.1");
    s.write(`GET /healthz HTTP/1.1\r\nHost: localhost\r\n`);
    const r = await outcome(s);
    expect(r.closed).toBe(true);
    expect(r.text).toMatch(/^HTTP\/1\.1 408 /);
  });

  it.skipIf(!haveOpenssl)("D51 an idle HTTP/1.1 keep-alive connection over TLS is closed after its answer", async () => {
    const s = await tlsConnect("http/1.1");
    s.write(`GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n`);
    const r = await outcome(s);
    expect(r.closed).toBe(true);
    expect(r.text).toMatch(/^HTTP\/1\.1 200 /);
  });

  it.skipIf(!haveOpenssl)(
    "D8 an HTTP/1.1 request without Host over TLS is a 400 MALFORMED_REQUEST problem+json (issue 39 item 4)",
    async () => {
      const s = await tlsConnect("http/1.1");
      s.write(`GET /healthz HTTP/1.1\r\n\r\n`);
      const r = await outcome(s);
      expect(r.closed).toBe(true);
      expect(r.text).toMatch(/^HTTP\/1\.1 400 /);
      expect(r.text).toContain("application/problem+json");
      expect(r.text).toContain('"reason":"MALFORMED_REQUEST"');
    },
  );

  it.skipIf(!haveOpenssl)("D51 a TLS session that sends only the HTTP/2 preface is closed", async () => {
    const s = await tlsConnect("h2");
    s.write(H2_PREFACE);
    expect((await outcome(s)).closed).toBe(true);
  });

  it.skipIf(!haveOpenssl)("D51 an idle HTTP/2 session over TLS is closed after its last stream", async () => {
    const session = http2.connect(server.url, { ca: readFileSync(cert) });
    expect(await h2Get(session, "/healthz")).toEqual({ status: 200, body: '{"status":"ok"}' });
    expect(await sessionClosed(session)).toBe(true);
  });
});
