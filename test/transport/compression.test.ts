// D44 response compression on the REST paths: the coding the client prefers
// (Accept-Encoding with q-values), zstd, br or gzip; small answers identity;
// a streamed values read compressed as it goes, reading back byte for byte;
// Connect, gRPC and gRPC-Web messages in the same codings, by their headers.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { request } from "node:http";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { ReadValuesRequestSchema, ValuesChunkSchema } from "../../src/gen/meridian/timeseries/v1/time_series_pb.js";
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync, zstdCompressSync, zstdDecompressSync } from "node:zlib";
import { randomBytes } from "node:crypto";
import { Writable } from "node:stream";
import { finished } from "node:stream/promises";
import { compressor, pipeFreeing } from "../../src/transport/compression.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { envelope, envelopes } from "../helpers/envelopes.js";
import { frameEnds } from "../helpers/frames.js";
import { draft } from "../helpers/messages.js";
import { TS_RW, makeRows, tsApi, tsHeaders } from "../helpers/timeseries.js";

let server: TestServer;
let key: string;
beforeAll(async () => {
  server = await startTestServer();
  key = await server.key({ roles: ["BackOffice"], scopes: ["platform_iam_featurestatus_readwrite"] });
  for (let i = 0; i < 20; i++) {
    await fetch(`${server.url}/api/admin/feature/message`, {
      method: "POST",
      headers: { "svc-open-api-key": key, "content-type": "application/json" },
      body: JSON.stringify(draft({ title: `Notice ${i}` })),
    });
  }
});
afterAll(() => server.close());

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A GET with node:http, which, unlike fetch, leaves the body as it came. */
function get(path: string, headers: Record<string, string>): Promise<Answer> {
  return send("GET", path, headers);
}

/** A request with node:http, its answer's body as it came. */
function send(method: string, path: string, headers: Record<string, string>, body?: Uint8Array): Promise<Answer> {
  return new Promise((resolve, reject) => {
    request(`${server.url}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    })
      .on("error", reject)
      .end(body);
  });
}

const encode: Record<string, (b: Buffer) => Buffer> = { zstd: zstdCompressSync, br: brotliCompressSync, gzip: gzipSync };

/** The envelopes of a streamed answer, each message inflated where flag 1 says it is compressed. */
function inflated(body: Buffer, coding: string): { flags: number; data: Buffer }[] {
  return envelopes(body).map((e) => ({ flags: e.flags, data: e.flags & 1 ? decode[coding](e.data) : e.data }));
}

const decode: Record<string, (b: Buffer) => Buffer> = {
  zstd: zstdDecompressSync,
  br: brotliDecompressSync,
  gzip: gunzipSync,
  identity: (b) => b,
};
const LIST_GLOBAL = "/meridian.featurestatus.v1.FeatureStatusService/ListGlobalMessages";
const CREATE_GLOBAL = "/meridian.featurestatus.v1.FeatureStatusService/CreateGlobalMessage";

describe("D44 response compression", () => {
  it.each([
    ["gzip", "gzip"],
    ["br", "br"],
    ["zstd", "zstd"],
    ["gzip, br, zstd", "zstd"],
    ["gzip;q=1, br;q=0.5, zstd;q=0.1", "gzip"],
    ["br;q=0, gzip", "gzip"],
    ["*", "zstd"],
    ["identity", "identity"],
    ["compress", "identity"],
  ])("D44 Accept-Encoding %s answers %s, the same JSON once decoded", async (accept, coding) => {
    const plain = await get("/api/admin/feature/message", { "svc-open-api-key": key });
    expect(plain.headers["content-encoding"]).toBeUndefined();
    const r = await get("/api/admin/feature/message", { "svc-open-api-key": key, "accept-encoding": accept });
    expect(r.status).toBe(200);
    expect(r.headers["content-encoding"] ?? "identity").toBe(coding);
    expect(r.headers.vary).toBe("accept-encoding, accept-language"); // D62: listings are in the reader's language too
    expect(decode[coding](r.body).toString()).toBe(plain.body.toString());
    if (coding !== "identity") expect(r.body.length).toBeLessThan(plain.body.length / 2);
  });

  it("D44 a small answer stays identity", async () => {
    const r = await get("/api/admin/feature/message?expiry=Pending", { "svc-open-api-key": key, "accept-encoding": "gzip, br, zstd" });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body.toString())).toMatchObject({ data: [] });
    expect(r.headers["content-encoding"]).toBeUndefined();
  });

  it.each(["zstd", "gzip", "br"])(
    "D28 D44 a streamed whole-range read in %s decodes to the identity answer byte for byte",
    async (coding) => {
      const ts = tsApi(server, await server.key(TS_RW));
      const d = await ts.dataset();
      const s = await ts.series(d);
      await ts.upload(d, s, makeRows(100_000));
      const path = `/api/ts/dataset/${d}/timeseries/${s}/values`;
      const headers = tsHeaders(await server.key(TS_RW), d);
      const plain = await get(path, headers);
      const r = await get(path, { ...headers, "accept-encoding": coding });
      expect(r.headers["content-encoding"]).toBe(coding);
      expect(decode[coding](r.body).equals(plain.body)).toBe(true);
      expect(r.body.length).toBeLessThan(plain.body.length / 4);
    },
  );

  it.each(["zstd", "gzip", "br"] as const)(
    "D28 each of the %s compressor's output buffers is freed once the socket has written its last chunk, and the bytes arrive whole",
    async (coding) => {
      const input = randomBytes(3 << 20); // does not compress: about twelve of zlib's 256 KiB output buffers
      const z = compressor(coding);
      const copies: Buffer[] = [];
      const chunks: Buffer[] = [];
      const socket = new Writable({
        write(chunk: Buffer, _encoding, done) {
          copies.push(Buffer.from(chunk));
          chunks.push(chunk);
          setImmediate(done); // written later, as a socket does
        },
      });
      pipeFreeing(z, socket);
      for (let at = 0; at < input.length; at += 64 << 10) z.write(input.subarray(at, at + (64 << 10)));
      z.end();
      await finished(socket);
      expect(decode[coding](Buffer.concat(copies)).equals(input)).toBe(true);
      const buffers = new Set(chunks.map((c) => c.buffer));
      expect(buffers.size).toBeGreaterThan(8);
      // Every buffer but the last, which zlib never filled: freed (a detached buffer reads as empty).
      expect([...buffers].filter((b) => b.byteLength === 0)).toHaveLength(buffers.size - 1);
    },
  );

  // Python's httpx (zstandard's decompressobj) and other one-frame decoders fail on a second
  // frame, even an empty one: a streamed answer is one frame, one gzip member, one brotli stream.
  it.each(["zstd", "gzip", "br"] as const)("D59 a streamed values, chart and many-series read in %s is one frame", async (coding) => {
    const ts = tsApi(server, await server.key(TS_RW));
    const d = await ts.dataset();
    const s = await ts.series(d);
    const s2 = await ts.series(d);
    await ts.upload(d, s, makeRows(50_000));
    await ts.upload(d, s2, makeRows(20_000));
    const headers = tsHeaders(await server.key(TS_RW), d);
    const reads: [string, string, Uint8Array?][] = [
      ["GET", `/api/ts/dataset/${d}/timeseries/${s}/values`],
      ["GET", `/api/ts/dataset/${d}/timeseries/${s}/values/chart?width=2000`],
      ["POST", `/api/ts/dataset/${d}/timeseries/values`, Buffer.from(JSON.stringify([s, s2]))],
    ];
    for (const [method, path, body] of reads) {
      const h = { ...headers, ...(body ? { "content-type": "application/json" } : {}) };
      const plain = await send(method, path, h, body);
      const r = await send(method, path, { ...h, "accept-encoding": coding }, body);
      expect(r.status, path).toBe(200);
      expect(r.headers["content-encoding"], path).toBe(coding);
      expect(frameEnds(coding, r.body), path).toEqual([r.body.length]);
      expect(decode[coding](r.body).equals(plain.body), path).toBe(true);
    }
  });
});

describe("D44 Connect, gRPC and gRPC-Web messages compressed", () => {
  it.each(["zstd", "br", "gzip"])(
    "D44 a Connect unary answer in %s when the client accepts it, the same JSON once decoded",
    async (coding) => {
      const headers = { "svc-open-api-key": key, "content-type": "application/json" };
      const plain = await send("POST", LIST_GLOBAL, headers, Buffer.from("{}"));
      expect(plain.status).toBe(200);
      expect(plain.headers["content-encoding"]).toBeUndefined();
      const r = await send("POST", LIST_GLOBAL, { ...headers, "accept-encoding": coding }, Buffer.from("{}"));
      expect(r.status).toBe(200);
      expect(r.headers["content-encoding"]).toBe(coding);
      expect(JSON.parse(decode[coding](r.body).toString())).toEqual(JSON.parse(plain.body.toString()));
      expect((JSON.parse(plain.body.toString()) as { data: unknown[] }).data.length).toBeGreaterThanOrEqual(20);
    },
  );

  it.each([
    ["Connect", "application/connect+json", "connect-accept-encoding", "connect-content-encoding"],
    ["gRPC-Web", "application/grpc-web+proto", "grpc-accept-encoding", "grpc-encoding"],
  ])("D44 a %s values stream in zstd: every message compressed, the rows as sent", async (_protocol, type, accept, answered) => {
    const ts = tsApi(server, await server.key(TS_RW));
    const d = await ts.dataset();
    const s = await ts.series(d);
    const rows = makeRows(40_000);
    await ts.upload(d, s, rows);
    const binary = type.endsWith("proto");
    const request = { datasetId: d, timeSeriesId: s };
    const r = await send(
      "POST",
      "/meridian.timeseries.v1.TimeSeriesService/ReadValues",
      { ...tsHeaders(await server.key(TS_RW), d), "content-type": type, [accept]: "zstd" },
      envelope(binary ? toBinary(ReadValuesRequestSchema, create(ReadValuesRequestSchema, request)) : Buffer.from(JSON.stringify(request))),
    );
    expect(r.status).toBe(200);
    expect(r.headers[answered]).toBe("zstd");
    const frames = inflated(r.body, "zstd");
    const end = frames.pop()!;
    // The end: Connect's end-of-stream message (flag 2, JSON), gRPC-Web's trailers (flag 0x80, text).
    if (binary) expect([end.flags, end.data.toString()]).toEqual([0x80, expect.stringMatching(/^grpc-status: ?0\r\n/)]);
    else expect([end.flags, JSON.parse(end.data.toString()).error]).toEqual([2, undefined]);
    expect(frames.length).toBeGreaterThan(1);
    for (const f of frames) expect(f.flags).toBe(1);
    const chunks = frames.map((f) =>
      binary
        ? fromBinary(ValuesChunkSchema, f.data).timestamps.length
        : (JSON.parse(f.data.toString()) as { timestamps: string[] }).timestamps.length,
    );
    expect(chunks.reduce((a, b) => a + b)).toBe(rows.length);
  });

  it.each(["zstd", "br", "gzip"])("D44 a Connect request sent in %s is read", async (coding) => {
    const r = await send(
      "POST",
      CREATE_GLOBAL,
      { "svc-open-api-key": key, "content-type": "application/json", "content-encoding": coding },
      encode[coding](Buffer.from(JSON.stringify({ message: draft({ title: `Sent in ${coding}` }) }))),
    );
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body.toString())).toMatchObject({ title: `Sent in ${coding}` });
  });

  it("D8 D51 a Connect request that is not the zstd it says is invalid_argument, and nothing is stored", async () => {
    const before = await send("POST", LIST_GLOBAL, { "svc-open-api-key": key, "content-type": "application/json" }, Buffer.from("{}"));
    const r = await send(
      "POST",
      CREATE_GLOBAL,
      { "svc-open-api-key": key, "content-type": "application/json", "content-encoding": "zstd" },
      Buffer.from("not zstd at all"),
    );
    expect(r.status).toBe(400);
    expect(JSON.parse(r.body.toString())).toMatchObject({ code: "invalid_argument" });
    const after = await send("POST", LIST_GLOBAL, { "svc-open-api-key": key, "content-type": "application/json" }, Buffer.from("{}"));
    expect(after.body.equals(before.body)).toBe(true);
  });

  it("D51 a Connect request that inflates past the method's limit is resource_exhausted", async () => {
    // 64 MiB of one title, a few KiB as zstd: refused without inflating it all.
    const bomb = zstdCompressSync(Buffer.from(JSON.stringify({ message: draft({ title: "x".repeat(64 << 20) }) })));
    expect(bomb.length).toBeLessThan(1 << 20);
    const r = await send(
      "POST",
      CREATE_GLOBAL,
      { "svc-open-api-key": key, "content-type": "application/json", "content-encoding": "zstd" },
      bomb,
    );
    expect(r.status).toBe(429);
    expect(JSON.parse(r.body.toString())).toMatchObject({ code: "resource_exhausted" });
  });
});
