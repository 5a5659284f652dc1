// HEAD wherever GET is (RFC 9110, 9.3.2): the status and header fields GET
// would send, and no content; a streamed read stops once its head is known,
// so a HEAD of a long series costs its planning, not its walk (D51).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as http2 from "node:http2";
import * as net from "node:net";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { draft, RW } from "../helpers/messages.js";
import { makeRows, TS_RW, tsApi, tsHeaders } from "../helpers/timeseries.js";

let server: TestServer;
let fsKey: string;
let tsKey: string;
let dataset: string;
let series: string;
const ROWS = 100_000; // seven blocks

beforeAll(async () => {
  server = await startTestServer();
  fsKey = await server.key(RW);
  tsKey = await server.key(TS_RW);
  const ts = tsApi(server, tsKey);
  dataset = await ts.dataset();
  series = await ts.series(dataset);
  await ts.upload(dataset, series, makeRows(ROWS));
  const created = await fetch(`${server.url}/api/admin/feature/head/message`, {
    method: "POST",
    headers: { "svc-open-api-key": fsKey, "content-type": "application/json" },
    body: JSON.stringify(draft({ title: "Heads up" })),
  });
  expect(created.status).toBe(201);
});
afterAll(() => server.close());

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  /** Whatever came after the head: nothing, for a HEAD. */
  after: Buffer;
}

/** One request on its own HTTP/1.1 connection, read to the connection's end: what a HEAD answer really carries. */
function raw(method: string, path: string, headers: Record<string, string> = {}): Promise<RawAnswer> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", reject);
    socket.on("end", () => {
      const all = Buffer.concat(chunks);
      const cut = all.indexOf("\r\n\r\n");
      if (cut < 0) return reject(new Error(`no head in ${JSON.stringify(all.toString("latin1"))}`));
      const [statusLine, ...lines] = all.subarray(0, cut).toString("latin1").split("\r\n");
      const fields: Record<string, string> = {};
      for (const line of lines) {
        const at = line.indexOf(":");
        fields[line.slice(0, at).toLowerCase()] = line.slice(at + 1).trim();
      }
      resolve({ status: Number(statusLine.split(" ")[1]), headers: fields, after: all.subarray(cut + 4) });
    });
    const head = Object.entries({ host: `${hostname}:${port}`, connection: "close", ...headers })
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join("");
    // Not half-closed: a client that ends its side has gone away, and a streamed answer stops (D28).
    socket.write(`${method} ${path} HTTP/1.1\r\n${head}\r\n`);
  });
}

/** The server's count of value rows read so far (D43). */
async function rowsRead(): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const line = /^meridian_value_rows_streamed_total (\d+)/m.exec(text);
  return line ? Number(line[1]) : 0;
}

const valuesPath = () => `/api/ts/dataset/${dataset}/timeseries/${series}/values`;

describe("D5 HEAD is answered (RFC 9110, 9.3.2) wherever GET is", () => {
  it("D5 HEAD of a listing has GET's status, type and length, and sends no content", async () => {
    const headers = { "svc-open-api-key": fsKey };
    const get = await raw("GET", "/api/admin/feature/head/message", headers);
    const head = await raw("HEAD", "/api/admin/feature/head/message", headers);
    expect(get.status).toBe(200);
    expect(get.after.length).toBeGreaterThan(0);
    expect(head.status).toBe(200);
    expect(head.headers["content-type"]).toBe(get.headers["content-type"]);
    expect(head.headers["content-length"]).toBe(get.headers["content-length"]);
    expect(head.headers.etag).toBe(get.headers.etag);
    expect(head.after.toString("latin1")).toBe("");
  });

  it("D47 a HEAD with the listing's ETag in If-None-Match is a 304", async () => {
    const headers = { "svc-open-api-key": fsKey };
    const { headers: got } = await raw("GET", "/api/admin/feature/head/message", headers);
    const head = await raw("HEAD", "/api/admin/feature/head/message", { ...headers, "if-none-match": got.etag });
    expect(head.status).toBe(304);
    expect(head.after.toString("latin1")).toBe("");
  });

  it("D13 a HEAD without credentials is the 401 GET gets, without its content", async () => {
    const head = await raw("HEAD", "/api/admin/feature/head/message");
    expect(head.status).toBe(401);
    expect(head.headers["www-authenticate"]).toBeTruthy();
    expect(head.headers["content-type"]).toBe("application/problem+json; charset=utf-8");
    expect(head.after.toString("latin1")).toBe("");
  });

  it("D8 a HEAD of an unknown series is the 404 GET gets, without its content", async () => {
    const path = `/api/ts/dataset/${dataset}/timeseries/00000000-0000-0000-0000-000000000000/values`;
    const get = await raw("GET", path, tsHeaders(tsKey, dataset));
    const head = await raw("HEAD", path, tsHeaders(tsKey, dataset));
    expect(get.status).toBe(404);
    expect(head.status).toBe(404);
    expect(head.headers["content-type"]).toBe("application/problem+json; charset=utf-8");
    expect(head.after.toString("latin1")).toBe("");
  });

  it("D8 a HEAD where only POST is bound is a 405 naming POST", async () => {
    const head = await raw("HEAD", "/api/ts/dataset", tsHeaders(tsKey));
    expect(head.status).toBe(405);
    expect(head.headers.allow).toBe("POST");
  });

  it.each([
    ["JSON", "application/json", "application/json; charset=utf-8"],
    ["Arrow", "application/vnd.apache.arrow.stream", "application/vnd.apache.arrow.stream"],
    ["Parquet", "application/vnd.apache.parquet", "application/vnd.apache.parquet"],
  ])("D51 a HEAD of a values read as %s answers GET's head and does not walk the series", async (_, accept, type) => {
    const headers = { ...tsHeaders(tsKey, dataset), accept };
    const before = await rowsRead();
    const head = await raw("HEAD", valuesPath(), headers);
    const during = (await rowsRead()) - before;
    expect(head.status).toBe(200);
    expect(head.headers["content-type"]).toBe(type);
    expect(head.headers.vary).toContain("accept");
    expect(head.after.toString("latin1")).toBe("");
    // At most the block whose rows the first chunk carries; a GET reads them all (the counter counts).
    expect(during).toBeLessThanOrEqual(16_536);
    const get = await raw("GET", valuesPath(), headers);
    expect(get.status).toBe(200);
    expect((await rowsRead()) - before - during).toBe(ROWS);
  });

  it("D44 a HEAD of a values read that accepts zstd names the coding GET would use, and sends nothing", async () => {
    const head = await raw("HEAD", valuesPath(), { ...tsHeaders(tsKey, dataset), "accept-encoding": "zstd" });
    expect(head.status).toBe(200);
    expect(head.headers["content-encoding"]).toBe("zstd");
    expect(head.after.toString("latin1")).toBe("");
  });

  it("D43 HEAD /metrics answers the scrape's head", async () => {
    const head = await raw("HEAD", "/metrics");
    expect(head.status).toBe(200);
    expect(head.headers["content-type"]).toMatch(/^text\/plain/);
    expect(head.after.toString("latin1")).toBe("");
  });

  it("D46 a HEAD of a live stream answers its head and ends at once", async () => {
    const started = Date.now();
    const head = await raw("HEAD", "/api/admin/feature/head/message/stream", { "svc-open-api-key": fsKey });
    expect(head.status).toBe(200);
    expect(head.headers["content-type"]).toBe("text/event-stream; charset=utf-8");
    expect(head.headers["cache-control"]).toBe("private, no-cache"); // D47: no cache keeps a stream
    expect(head.after.toString("latin1")).toBe("");
    expect(Date.now() - started).toBeLessThan(5_000); // not held open until a heartbeat or an event
  });

  it("D5 a HEAD over HTTP/2 answers the status and ends the stream without data: a listing, and a streamed values read", async () => {
    const session = http2.connect(server.url);
    const head = (path: string, headers: Record<string, string>) =>
      new Promise<{ status: number; type: unknown; bytes: number }>((resolve, reject) => {
        const s = session.request({ ":method": "HEAD", ":path": path, ...headers });
        let status = 0;
        let type: unknown;
        let bytes = 0;
        s.on("response", (h) => {
          status = Number(h[":status"]);
          type = h["content-type"];
        });
        s.on("data", (c: Buffer) => (bytes += c.length));
        s.on("end", () => resolve({ status, type, bytes }));
        s.on("error", reject);
      });
    try {
      expect(await head("/api/admin/feature/head/message", { "svc-open-api-key": fsKey })).toEqual({
        status: 200,
        type: "application/json; charset=utf-8",
        bytes: 0,
      });
      const arrow = "application/vnd.apache.arrow.stream";
      expect(await head(valuesPath(), { ...tsHeaders(tsKey, dataset), accept: arrow })).toEqual({ status: 200, type: arrow, bytes: 0 });
    } finally {
      session.close();
    }
  });

  it("D5 no HEAD above left an error in the server's log", () => {
    expect(server.logs.filter((line) => Number(line.level) >= 50)).toEqual([]);
  });
});
