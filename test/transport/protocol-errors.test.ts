// D8 for what node:http refuses before any request exists (a malformed
// request line or header, headers too large, a URI too long, headers that
// never end): a problem+json like every other refusal, naming its reason
// (D59), and the connection closed. Over raw sockets: no client would send these.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import net from "node:net";
import { PassThrough } from "node:stream";
import { answerClientError } from "../../src/transport/client-errors.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

let server: TestServer;
let host: string;
beforeAll(async () => {
  server = await startTestServer({ MERIDIAN_HEADERS_TIMEOUT_S: "1" });
  host = new URL(server.url).host;
});
afterAll(() => server.close());

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends `bytes` (in pieces of `piece` bytes, a few ms apart, when given) and reads until the server closes the connection. */
function exchange(bytes: string, piece?: number): Promise<Answer> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    socket.on("error", () => {}); // the server may close while we still write
    let text = "";
    socket.on("data", (d: Buffer) => (text += d.toString("latin1")));
    socket.once("close", () => {
      const cut = text.indexOf("\r\n\r\n");
      if (cut < 0) return reject(new Error(`no answer: ${JSON.stringify(text)}`));
      const [statusLine, ...lines] = text.slice(0, cut).split("\r\n");
      const headers: Record<string, string> = {};
      for (const line of lines) headers[line.slice(0, line.indexOf(":")).toLowerCase()] = line.slice(line.indexOf(":") + 1).trim();
      resolve({ status: Number(statusLine.split(" ")[1]), headers, body: text.slice(cut + 4) });
    });
    if (piece === undefined) return void socket.write(bytes);
    void (async () => {
      for (let at = 0; at < bytes.length && !socket.destroyed; at += piece) {
        socket.write(bytes.slice(at, at + piece));
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
  });
}

function expectProblem(a: Answer, status: number, reason: string): void {
  expect(a.status).toBe(status);
  expect(a.headers["content-type"]).toBe("application/problem+json; charset=utf-8");
  expect(a.headers.connection).toBe("close");
  expect(Number(a.headers["content-length"])).toBe(Buffer.byteLength(a.body));
  expect(JSON.parse(a.body)).toMatchObject({ type: "about:blank", status, reason, detail: expect.any(String) });
}

describe("D8 refusals of the HTTP layer are problem+json", () => {
  it("D8 a malformed request line is a 400 MALFORMED_REQUEST", async () => {
    expectProblem(await exchange("GARBAGE\r\n\r\n"), 400, "MALFORMED_REQUEST");
  });

  it("D8 a malformed header line is a 400 MALFORMED_REQUEST", async () => {
    expectProblem(await exchange(`GET /healthz HTTP/1.1\r\nHost: ${host}\r\nno colon here\r\n\r\n`), 400, "MALFORMED_REQUEST");
  });

  it("D8 an HTTP/1.1 request without Host is a 400 MALFORMED_REQUEST, not node:http's bare 400 (issue 39 item 4)", async () => {
    expectProblem(await exchange("GET /healthz HTTP/1.1\r\n\r\n"), 400, "MALFORMED_REQUEST");
  });

  it("D8 an HTTP/1.1 request with two Host headers is a 400 MALFORMED_REQUEST (RFC 9112, 3.2)", async () => {
    expectProblem(await exchange(`GET /healthz HTTP/1.1\r\nHost: ${host}\r\nHost: elsewhere\r\n\r\n`), 400, "MALFORMED_REQUEST");
  });

  it("D8 an HTTP/1.0 request without Host is served: Host came with HTTP/1.1", async () => {
    const a = await exchange("GET /healthz HTTP/1.0\r\n\r\n");
    expect([a.status, a.body]).toEqual([200, '{"status":"ok"}']);
  });

  it("D8 a request line and headers over 16 KiB are a 431 REQUEST_HEADERS_TOO_LARGE, however the bytes arrive, a long URI too", async () => {
    expectProblem(
      await exchange(`GET /healthz HTTP/1.1\r\nHost: ${host}\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`),
      431,
      "REQUEST_HEADERS_TOO_LARGE",
    );
    const longLine = `GET /api/admin/feature/message?x=${"a".repeat(20_000)} HTTP/1.1\r\nHost: ${host}\r\n\r\n`;
    expectProblem(await exchange(longLine), 431, "REQUEST_HEADERS_TOO_LARGE");
    expectProblem(await exchange(longLine, 4096), 431, "REQUEST_HEADERS_TOO_LARGE");
  });

  it("D8 a malformed request pipelined behind one still being answered does not take its place: that answer comes first, then the connection closes", async () => {
    const a = await exchange(`GET /readyz HTTP/1.1\r\nHost: ${host}\r\n\r\nGARBAGE\r\n\r\n`);
    expect(a.status).toBe(200);
    expect(a.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(JSON.parse(a.body.slice(0, Number(a.headers["content-length"])))).toEqual({ status: "ready" });
  });

  it("D8 D51 headers that do not end in time are a 408 REQUEST_TIMEOUT", async () => {
    expectProblem(await exchange(`GET /healthz HTTP/1.1\r\nHost: ${host}\r\n`), 408, "REQUEST_TIMEOUT");
  });

  it("D5 a request target in absolute form (RFC 9112) is served as its path: built-in routes and REST alike", async () => {
    const health = await exchange(`GET http://${host}/healthz HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
    expect([health.status, health.body]).toEqual([200, '{"status":"ok"}']);
    const rest = await exchange(
      `GET http://${host}/api/admin/feature/x/message?limit=1 HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`,
    );
    expect(rest.status).toBe(401); // the route was found: it asks for credentials
  });

  it("D8 a socket error that is not HTTP's, its code a number (a ConnectError that cut a stream), only closes the socket, never throws", () => {
    for (const code of [13, undefined, null, { x: 1 }, "ECONNRESET"]) {
      const socket = new PassThrough();
      expect(() => answerClientError(Object.assign(new Error("cut"), { code }), socket)).not.toThrow();
      expect(socket.destroyed).toBe(true);
    }
  });

  it("D8 the server serves on after each of them", async () => {
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });
});
