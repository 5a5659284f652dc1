// D8, D34: gRPC callers get gRPC answers (an unknown method is status 12, not
// an HTTP 404 problem+json), and a client that leaves or runs out of time is
// logged at info as cancelled, not as an unexpected error.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as grpc from "@grpc/grpc-js";
import http2 from "node:http2";
import { TimeSeriesService } from "../../src/gen/meridian/timeseries/v1/time_series_pb.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { hostPort } from "../helpers/clients.js";
import { TS_RW, makeRows, tsApi, tsHeaders } from "../helpers/timeseries.js";
import { envelope } from "../helpers/envelopes.js";
import { toBinary, create } from "@bufbuild/protobuf";
import { ReadValuesRequestSchema } from "../../src/gen/meridian/timeseries/v1/time_series_pb.js";

let server: TestServer;
let key: string;
let d: string;
let s: string;

beforeAll(async () => {
  server = await startTestServer();
  key = await server.key(TS_RW);
  const api = tsApi(server, key);
  d = await api.dataset();
  s = await api.series(d);
  await api.upload(d, s, makeRows(300_000));
});
afterAll(() => server.close());

/** A unary call of any path through grpc-js, bytes in and out. */
function rawUnary(path: string): Promise<grpc.ServiceError | undefined> {
  const client = new grpc.Client(hostPort(server.url), grpc.credentials.createInsecure());
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      path,
      (b: Buffer) => b,
      (b: Buffer) => b,
      Buffer.alloc(0),
      new grpc.Metadata(),
      (err) => {
        client.close();
        resolve(err ?? undefined);
      },
    );
  });
}

async function waitFor<T>(find: () => T | undefined, ms = 5000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = find();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
}

const errorLines = () => server.logs.filter((l) => (l.level as number) >= 50);

describe("D8 an unknown gRPC method", () => {
  it("D8 an unknown method of a known service, asked over gRPC, is status 12 Unimplemented", async () => {
    const err = await rawUnary("/meridian.timeseries.v1.TimeSeriesService/NoSuchMethod");
    expect(err?.code).toBe(grpc.status.UNIMPLEMENTED);
    // The server's own gRPC answer, not grpc-js's reading of an HTTP 404.
    expect(err?.details).toBe("unknown method /meridian.timeseries.v1.TimeSeriesService/NoSuchMethod");
  });

  it("D8 a method of an unknown service, asked over gRPC, is status 12 Unimplemented", async () => {
    const err = await rawUnary("/no.such.v1.Service/Method");
    expect(err?.details).toBe("unknown method /no.such.v1.Service/Method");
    expect(err?.code).toBe(grpc.status.UNIMPLEMENTED);
  });

  it("D8 an unknown method asked over gRPC-Web is grpc-status 12 in the gRPC-Web form", async () => {
    const r = await fetch(`${server.url}/no.such.v1.Service/Method`, {
      method: "POST",
      headers: { "content-type": "application/grpc-web+proto" },
      body: new Uint8Array(5),
    });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/grpc-web+proto");
    expect(r.headers.get("grpc-status")).toBe("12");
  });

  it("D8 an unknown path without a gRPC content type is still a REST 404 problem", async () => {
    const r = await fetch(`${server.url}/no.such.v1.Service/Method`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(r.status).toBe(404);
    expect(r.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  });
});

describe("D34 cancelled calls are logged as cancelled", () => {
  const readValues = `/${TimeSeriesService.typeName}/ReadValues`;
  const request = () => Buffer.from(toBinary(ReadValuesRequestSchema, create(ReadValuesRequestSchema, { datasetId: d, timeSeriesId: s })));
  const metadata = () => {
    const md = new grpc.Metadata();
    for (const [k, v] of Object.entries(tsHeaders(key, d))) md.set(k, v);
    return md;
  };

  it("D34 a gRPC client that cancels a stream is logged at info as cancelled, with no error line", async () => {
    const before = server.logs.length;
    const client = new grpc.Client(hostPort(server.url), grpc.credentials.createInsecure());
    const call = client.makeServerStreamRequest(
      readValues,
      (b: Buffer) => b,
      (b: Buffer) => b,
      request(),
      metadata(),
    );
    await new Promise<void>((resolve) => {
      call.once("data", () => {
        call.cancel();
        resolve();
      });
      call.on("error", () => undefined);
    });
    const line = await waitFor(() => server.logs.slice(before).find((l) => l.msg === "request" && l.path === readValues));
    await new Promise((r) => setTimeout(r, 200));
    client.close();
    expect(line.completed).toBe(false);
    expect(errorLines()).toEqual([]);
    expect(line).toMatchObject({ level: 30, cancelled: true });
  });

  it("D34 a gRPC stream that reaches its deadline is logged at info as cancelled, with no error line", async () => {
    const before = server.logs.length;
    // A reader that takes nothing: with a 64 KB window the server soon waits on
    // it, and its grpc-timeout passes meanwhile. (grpc-js's client takes in
    // the whole answer however slowly its caller reads, so the server would
    // finish first.)
    const session = http2.connect(server.url, { settings: { initialWindowSize: 65_535 } });
    const stream = session.request({
      ":method": "POST",
      ":path": readValues,
      "content-type": "application/grpc",
      te: "trailers",
      "grpc-timeout": "300m",
      ...tsHeaders(key, d),
    });
    stream.end(envelope(request()));
    await new Promise<void>((resolve) => stream.once("response", () => resolve()));
    stream.pause();
    await new Promise((r) => setTimeout(r, 600)); // past the deadline
    session.destroy();
    const line = await waitFor(() => server.logs.slice(before).find((l) => l.msg === "request" && l.path === readValues));
    await new Promise((r) => setTimeout(r, 200));
    expect(errorLines()).toEqual([]);
    expect(line).toMatchObject({ level: 30, cancelled: true });
  });

  it("D34 a REST read aborted over HTTP/2 is logged completed: false, as over HTTP/1.1", async () => {
    const path = `/api/ts/dataset/${d}/timeseries/${s}/values`;
    const session = http2.connect(server.url);
    const stream = session.request({ ":path": path, ...tsHeaders(key, d) });
    await new Promise<void>((resolve) => stream.once("data", () => resolve()));
    stream.close(http2.constants.NGHTTP2_CANCEL);
    session.close();
    const line = await waitFor(() => server.logs.find((l) => l.msg === "request" && l.method === "GET" && l.path === path));
    expect(line).toMatchObject({ level: 30, status: 200, completed: false, cancelled: true });
    expect(errorLines()).toEqual([]);
  });
});
