// D55 every refusal is read: an answer given before the request body was read
// goes out whole with Connection: close, then the server reads and discards
// (lingering close) so that a client still writing reads the status instead of
// a reset; a refused gRPC-Web message does not leave its body to be read as
// the connection's next request; the header timeout closes requests and
// HTTP/2 sessions that never finish starting. Raw sockets throughout: a client
// library would hide what the server does with the connection.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import http2 from "node:http2";
import net from "node:net";
import { create, toBinary } from "@bufbuild/protobuf";
import { CreateGlobalMessageRequestSchema, FeatureStatusService } from "../../src/gen/meridian/featurestatus/v1/feature_status_pb.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { envelope } from "../helpers/envelopes.js";
import { RW } from "../helpers/messages.js";
import { TS_RW, tsApi } from "../helpers/timeseries.js";

const MiB = 1024 * 1024;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Exchange {
  /** Everything the server sent. */
  text: string;
  /** The error the client's socket met (EPIPE, ECONNRESET), if any. */
  error?: string;
  /** Body bytes written when the answer's first byte arrived (-1: it came after the last). */
  sentAtAnswer: number;
  /** Whether the server closed the connection within the wait. */
  closed: boolean;
  /** Milliseconds from the last body byte written to the close. */
  closedAfterMs: number;
}

/**
 * Writes `head`, then `prefix` and `total - prefix` bytes of filler as the
 * socket takes them, whatever the server answers meanwhile. With
 * `readLate`, nothing is read until the whole body is written: a client that
 * reads its answer only then.
 */
function send(
  url: string,
  head: string,
  total: number,
  opts: { prefix?: Buffer; readLate?: boolean; waitMs?: number; then?: string } = {},
): Promise<Exchange> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    // Half-open allowed: the server's FIN after its answer does not stop this client writing, as it would not stop curl.
    const s = net.connect({ port: Number(port), host: hostname, allowHalfOpen: true });
    let text = "";
    let error: string | undefined;
    let sent = 0;
    let sentAtAnswer = -1;
    let doneAt = 0;
    let finished = false;
    s.once("end", () => (finished = true));
    // Cut while still writing (EPIPE, reset): the exchange ends there.
    s.once("close", () => doneAt === 0 && finish(true));
    if (opts.readLate) s.pause();
    s.on("data", (d: Buffer) => {
      if (sentAtAnswer < 0 && sent < total) sentAtAnswer = sent;
      text += d.toString("latin1");
    });
    s.on("error", (e: NodeJS.ErrnoException) => (error ??= e.code ?? e.message));
    const finish = (closed: boolean) => resolve({ text, error, sentAtAnswer, closed, closedAfterMs: closed ? Date.now() - doneAt : -1 });
    const waiting = () => {
      doneAt = Date.now();
      if (opts.readLate) s.resume();
      if (opts.then && !s.destroyed) s.write(opts.then);
      // Once the server has said it sends no more (its FIN) and this client has sent all, it hangs up too.
      if (finished) s.end();
      else s.once("end", () => s.end());
      const timer = setTimeout(() => {
        s.destroy();
        finish(false);
      }, opts.waitMs ?? 20_000);
      s.once("close", () => {
        clearTimeout(timer);
        finish(true);
      });
    };
    s.write(head);
    const prefix = opts.prefix ?? Buffer.alloc(0);
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const step = () => {
      while (sent < total && !s.destroyed) {
        const piece = sent === 0 && prefix.length ? prefix : chunk.subarray(0, Math.min(chunk.length, total - sent));
        sent += piece.length;
        if (!s.write(piece)) return void s.once("drain", step);
      }
      waiting();
    };
    step();
  });
}

/** The status line, the header block (lower case) and the body of the first answer in `text`. */
function answer(text: string): { status: number; headers: string; body: string } {
  const end = text.indexOf("\r\n\r\n");
  const head = text.slice(0, end);
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), headers: head.toLowerCase(), body: text.slice(end + 4) };
}

const TS_HEADERS = "Content-Type: application/json\r\nsvc-service-id: timeseries\r\nsvc-project-id: proj-a\r\n";

describe("D55 a refusal before the body is read is read by the client", () => {
  let server: TestServer;
  let host: string;
  let valuesPath: string;
  let writer: string;
  let messageWriter: string;
  beforeAll(async () => {
    server = await startTestServer();
    host = new URL(server.url).host;
    writer = await server.key({ clientId: "writer", ...TS_RW });
    messageWriter = await server.key({ clientId: "message-writer", ...RW });
    const api = tsApi(server, writer);
    const ds = await api.dataset();
    valuesPath = `/api/ts/dataset/${ds}/timeseries/${await api.series(ds)}/values`;
  });
  afterAll(() => server.close());

  for (const readLate of [false, true]) {
    const how = readLate ? "reads only after writing it all" : "reads while writing";
    it(`D55 an anonymous 64 MiB upload is answered 401 at once with Connection: close, and a client that ${how} gets it without a reset`, async () => {
      const head = `POST ${valuesPath} HTTP/1.1\r\nHost: ${host}\r\n${TS_HEADERS}Content-Length: ${64 * MiB}\r\n\r\n`;
      const r = await send(server.url, head, 64 * MiB, { readLate });
      const a = answer(r.text);
      expect(r.error).toBeUndefined();
      console.log(
        `401 to a client that ${how}: ${r.error ?? "no socket error"}, ${r.sentAtAnswer < 0 ? "answer read after the body" : `answer at ${(r.sentAtAnswer / MiB).toFixed(1)} MiB sent`}`,
      );
      expect(a.status).toBe(401);
      expect(a.headers).toContain("connection: close");
      expect(JSON.parse(a.body)).toMatchObject({ status: 401, code: "unauthenticated" });
      if (!readLate) expect(r.sentAtAnswer).toBeGreaterThanOrEqual(0); // answered before the body was all sent
      expect(r.closed).toBe(true);
    }, 60_000);

    it(`D55 a 64 MiB + 1 upload is answered 413 with Connection: close, and a client that ${how} gets it without a reset`, async () => {
      const head = `POST ${valuesPath} HTTP/1.1\r\nHost: ${host}\r\n${TS_HEADERS}svc-open-api-key: ${writer}\r\nContent-Length: ${64 * MiB + 1}\r\n\r\n`;
      const r = await send(server.url, head, 64 * MiB + 1, { readLate });
      const a = answer(r.text);
      expect(r.error).toBeUndefined();
      console.log(
        `413 to a client that ${how}: ${r.error ?? "no socket error"}, ${r.sentAtAnswer < 0 ? "answer read after the body" : `answer at ${(r.sentAtAnswer / MiB).toFixed(1)} MiB sent`}`,
      );
      expect(a.status).toBe(413);
      expect(a.headers).toContain("connection: close");
      expect(a.headers).toMatch(/content-type: application\/problem\+json/);
      expect(JSON.parse(a.body)).toMatchObject({ status: 413 });
      if (!readLate) expect(r.sentAtAnswer).toBeGreaterThanOrEqual(0);
      expect(r.closed).toBe(true);
    }, 60_000);
  }

  it("D55 a refused client that goes quiet mid-body is let go after the lingering's silence bound (5 s), not held for the request timeout", async () => {
    const { hostname, port } = new URL(server.url);
    const s = net.connect({ port: Number(port), host: hostname, allowHalfOpen: true });
    let text = "";
    s.on("data", (d: Buffer) => (text += d.toString("latin1")));
    const failed = new Promise<string>((resolve) => s.once("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message)));
    // 1 MiB of the 64 promised, then silence, with the half-closed socket kept open on this side.
    s.write(`POST ${valuesPath} HTTP/1.1\r\nHost: ${host}\r\n${TS_HEADERS}Content-Length: ${64 * MiB}\r\n\r\n`);
    s.write(Buffer.alloc(MiB, 0x20));
    await pause(1000);
    expect(answer(text).status).toBe(401);
    s.write(Buffer.alloc(1024, 0x20)); // within the bound: still read
    await pause(8000);
    expect(s.destroyed).toBe(false);
    // Past the bound the server has let go: what is sent now meets a closed socket.
    s.write(Buffer.alloc(64 * 1024, 0x20));
    s.write(Buffer.alloc(64 * 1024, 0x20));
    const outcome = await Promise.race([failed, pause(5000).then(() => "still open")]);
    s.destroy();
    expect(outcome).toMatch(/ECONNRESET|EPIPE/);
  }, 30_000);

  const createRpc = `/${FeatureStatusService.typeName}/CreateGlobalMessage`;
  /** A gRPC-Web request of one message of `size` bytes, over the method's 1 MiB when size is larger. */
  const grpcWebHead = (size: number, extra = "") =>
    `POST ${createRpc} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/grpc-web+proto\r\nX-Grpc-Web: 1\r\nsvc-open-api-key: ${messageWriter}\r\n${extra}Content-Length: ${size + 5}\r\n\r\n`;

  it("D55 a gRPC-Web message over the limit is refused with grpc-status 8 and Connection: close; the next request is not lost in its body", async () => {
    const size = 2 * MiB;
    const r = await send(server.url, grpcWebHead(size), size + 5, {
      prefix: header(size),
      then: `GET /healthz HTTP/1.1\r\nHost: ${host}\r\n\r\n`,
      waitMs: 20_000,
    });
    const a = answer(r.text);
    expect(r.error).toBeUndefined();
    expect(a.status).toBe(200);
    expect(a.headers).toContain("connection: close");
    expect(a.body).toMatch(/grpc-status: ?8/);
    // The connection ends rather than waiting 60 s for a body that is not read: the client
    // sends its next request on a new connection.
    expect(r.closed).toBe(true);
    expect(r.closedAfterMs).toBeLessThan(12_000);
    const next = await fetch(`${server.url}/healthz`);
    expect(next.status).toBe(200);
  }, 40_000);

  it("D55 a gRPC-Web call within the limit keeps its connection alive for the next request", async () => {
    const message = toBinary(
      CreateGlobalMessageRequestSchema,
      create(CreateGlobalMessageRequestSchema, {
        message: {
          type: "Informational",
          title: "kept alive",
          body: "",
          startDate: new Date(Date.now() - 60_000).toISOString(),
          expiringDate: new Date(Date.now() + 3_600_000).toISOString(),
        },
      }),
    );
    const body = envelope(message);
    const r = await send(server.url, grpcWebHead(message.length), body.length, {
      prefix: body,
      then: `GET /healthz HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`,
      waitMs: 10_000,
    });
    const a = answer(r.text);
    expect(a.status).toBe(200);
    expect(a.headers).not.toContain("connection: close");
    expect(a.body).toMatch(/grpc-status: ?0/);
    // The second answer came on the same connection.
    expect(r.text).toMatch(/HTTP\/1\.1 200 OK[\s\S]*HTTP\/1\.1 200 OK[\s\S]*\{"status":"ok"\}/);
  }, 20_000);
});

/** A gRPC envelope header declaring a message of `size` bytes. */
function header(size: number): Buffer {
  const out = Buffer.alloc(5);
  out.writeUInt32BE(size, 1);
  return out;
}

describe("D55 the header timeout closes what never finishes starting", () => {
  let server: TestServer;
  let host: string;
  // A short header timeout, and idle and request timeouts far longer, so that only the header timeout can be what closes.
  beforeAll(async () => {
    server = await startTestServer({ MERIDIAN_HEADERS_TIMEOUT_S: "1", MERIDIAN_IDLE_TIMEOUT_S: "60", MERIDIAN_REQUEST_TIMEOUT_S: "120" });
    host = new URL(server.url).host;
  });
  afterAll(() => server.close());

  /** Connects, writes `bytes`, and says whether the server closed the connection within `ms`, and what it sent. */
  async function probe(bytes: string | Buffer, ms = 8000): Promise<{ closed: boolean; text: string }> {
    const { hostname, port } = new URL(server.url);
    const s = net.connect(Number(port), hostname);
    let text = "";
    s.on("data", (d: Buffer) => (text += d.toString("latin1")));
    s.on("error", () => {});
    s.write(bytes);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        s.destroy();
        resolve({ closed: false, text });
      }, ms);
      s.once("close", () => {
        clearTimeout(timer);
        resolve({ closed: true, text });
      });
    });
  }

  it("D55 a socket that sent part of a request's headers is closed by the header timeout", async () => {
    const r = await probe(`GET /healthz HTTP/1.1\r\nHost: ${host}\r\n`);
    expect(r.closed).toBe(true);
    expect(r.text).toMatch(/^HTTP\/1\.1 408 /);
  });

  it("D55 a keep-alive connection whose second request's headers stop half way is closed by the header timeout", async () => {
    const r = await probe(`GET /healthz HTTP/1.1\r\nHost: ${host}\r\n\r\nGET /healthz HTTP/1.1\r\nHost: ${host}\r\n`);
    expect(r.closed).toBe(true);
    expect(r.text).toMatch(/^HTTP\/1\.1 200 [\s\S]*HTTP\/1\.1 408 /);
  });

  it("D55 an HTTP/0.9 request line (no version) is answered 400 or closed", async () => {
    const r = await probe("GET /healthz\r\n");
    expect(r.closed).toBe(true);
    expect(r.text).toMatch(/^(HTTP\/1\.1 (400|408) |$)/);
  });

  it("D55 an HTTP/2 session that sent its preface and SETTINGS and no request is closed by the header timeout", async () => {
    // What http2.connect() sends before any request: the preface and an empty SETTINGS frame.
    const settings = Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]);
    const r = await probe(Buffer.concat([Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), settings]));
    expect(r.closed).toBe(true);
  });

  it("D55 an HTTP/2 client session that makes no request is sent GOAWAY by the header timeout", async () => {
    const session = http2.connect(server.url);
    session.on("error", () => {});
    const goaway = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 8000);
      session.once("goaway", () => {
        clearTimeout(timer);
        resolve(true);
      });
      session.once("close", () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    try {
      expect(await goaway).toBe(true);
    } finally {
      session.destroy();
    }
  });

  it("D55 an HTTP/2 session that makes its first request in time is served and kept", async () => {
    const session = http2.connect(server.url);
    session.on("error", () => {});
    try {
      await pause(300);
      const status = await new Promise<number>((resolve, reject) => {
        const s = session.request({ ":path": "/healthz" });
        s.on("response", (h) => resolve(Number(h[":status"])));
        s.on("error", reject);
        s.resume();
        s.end();
      });
      expect(status).toBe(200);
      await pause(1500); // past the header timeout: the session now waits on the idle timeout (60 s)
      expect(session.closed || session.destroyed).toBe(false);
    } finally {
      session.destroy();
    }
  });
});
