// D44 response compression on the REST paths: the coding the client prefers
// (Accept-Encoding with q-values), zstd, br or gzip; small answers identity;
// a streamed values read compressed as it goes, reading back byte for byte.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { request } from "node:http";
import { brotliDecompressSync, gunzipSync, zstdDecompressSync } from "node:zlib";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { draft } from "../helpers/messages.js";
import { TS_RW, makeRows, tsApi, tsHeaders } from "../helpers/timeseries.js";

let server: TestServer;
let key: string;
beforeAll(async () => {
  server = await startTestServer();
  key = await server.key({ roles: ["BackOffice"], scopes: ["platform_iam_featurestatus_readwrite"] });
  for (let i = 0; i < 20; i++) {
    await fetch(`${server.url}/api/admin/feature/message`, { method: "POST", headers: { "svc-open-api-key": key, "content-type": "application/json" }, body: JSON.stringify(draft({ title: `Notice ${i}` })) });
  }
});
afterAll(() => server.close());

/** A GET with node:http, which, unlike fetch, leaves the body as it came. */
function get(path: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    request(`${server.url}${path}`, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    })
      .on("error", reject)
      .end();
  });
}

const decode: Record<string, (b: Buffer) => Buffer> = { zstd: zstdDecompressSync, br: brotliDecompressSync, gzip: gunzipSync, identity: (b) => b };

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
    expect(r.headers.vary).toBe("accept-encoding");
    expect(decode[coding](r.body).toString()).toBe(plain.body.toString());
    if (coding !== "identity") expect(r.body.length).toBeLessThan(plain.body.length / 2);
  });

  it("D44 a small answer stays identity", async () => {
    const r = await get("/api/admin/feature/message?expiry=Pending", { "svc-open-api-key": key, "accept-encoding": "gzip, br, zstd" });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body.toString())).toMatchObject({ data: [] });
    expect(r.headers["content-encoding"]).toBeUndefined();
  });

  it.each(["zstd", "gzip", "br"])("D28 D44 a streamed whole-range read in %s decodes to the identity answer byte for byte", async (coding) => {
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
  });
});
