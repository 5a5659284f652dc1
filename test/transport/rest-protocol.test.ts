// D6-D9 on the REST paths of the real server.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import * as zlib from "node:zlib";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { draft } from "../helpers/messages.js";
import { makeRows, TS_RW, tsApi } from "../helpers/timeseries.js";

let server: TestServer;
let headers: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer();
  headers = {
    "svc-open-api-key": await server.key({ roles: ["BackOffice"], scopes: ["platform_iam_featurestatus_readwrite"] }),
  };
});
afterAll(() => server.close());

const post = (path: string, body: string, contentType?: string, extra: Record<string, string> = {}) =>
  fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { ...headers, ...(contentType ? { "content-type": contentType } : {}), ...extra },
    body,
  });

describe("D6 request bodies", () => {
  it.each([
    "application/json",
    "application/json; charset=latin1",
    "text/json",
    "application/json-patch+json",
    "application/vnd.meridian+json",
    "APPLICATION/JSON",
  ])("D6 accepts %s", async (type) => {
    const title = `Sent as ${type}`;
    const r = await post("/api/admin/feature/message", JSON.stringify(draft({ title })), type);
    expect(r.status).toBe(201);
    expect(r.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(await r.json()).toMatchObject({ type: "Warning", title, body: "<b>soon</b>", featureId: null });
  });

  it.each(["text/plain", "application/x-www-form-urlencoded", "application/xml", "multipart/form-data; boundary=x"])(
    "D6 refuses %s with 415",
    async (type) => {
      const r = await post("/api/admin/feature/message", "{}", type);
      expect(r.status).toBe(415);
      expect(r.headers.get("content-type")).toBe("application/problem+json; charset=utf-8");
    },
  );

  it("D6 a body without a content type gets 415", async () => {
    const r = await fetch(`${server.url}/api/admin/feature/message`, { method: "POST", headers, body: new Uint8Array([123, 125]) });
    expect(r.status).toBe(415);
  });

  it("D6 GET and DELETE need no content type", async () => {
    const created = (await (
      await post("/api/admin/feature/message", JSON.stringify(draft({ title: "Read and deleted" })), "application/json")
    ).json()) as { id: number };
    const r = await fetch(`${server.url}/api/admin/feature/message`, { headers });
    expect(r.status).toBe(200);
    const listed = (await r.json()) as { data: { id: number; title: string }[] };
    expect(listed.data.find((m) => m.id === created.id)).toMatchObject({ title: "Read and deleted" });
    const d = await fetch(`${server.url}/api/admin/feature/message/${created.id}`, { method: "DELETE", headers });
    expect(d.status).toBe(204);
    expect(await d.text()).toBe("");
  });

  it("D6 a body over 1 MiB gets 413", async () => {
    const big = JSON.stringify({ title: "x".repeat(1024 * 1024) });
    const r = await post("/api/admin/feature/message", big, "application/json");
    expect(r.status).toBe(413);
    expect(((await r.json()) as { status: number }).status).toBe(413);
  });

  const zstd = (zlib as { zstdCompressSync?: (b: Buffer) => Buffer }).zstdCompressSync;
  const encoders: [string, (b: Buffer) => Buffer][] = [
    ["gzip", gzipSync],
    ["deflate", deflateSync],
    ["br", brotliCompressSync],
    ...(zstd ? [["zstd", zstd] as [string, (b: Buffer) => Buffer]] : []),
  ];
  const postBytes = (path: string, body: Buffer, encoding: string) =>
    fetch(`${server.url}${path}`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json", "content-encoding": encoding },
      body: new Uint8Array(body),
    });

  it.each(encoders)("D6 a REST body sent with Content-Encoding %s is inflated and read", async (encoding, encode) => {
    const title = `Sent as ${encoding}`;
    const r = await postBytes("/api/admin/feature/message", encode(Buffer.from(JSON.stringify(draft({ title })))), encoding);
    expect(r.status).toBe(201);
    expect(await r.json()).toMatchObject({ title, body: "<b>soon</b>" });
  });

  it("D6 D51 a REST gzip body that inflates past 1 MiB is a 413, read no further", async () => {
    const bomb = gzipSync(Buffer.from(JSON.stringify(draft({ title: "x", body: " ".repeat(64 * 1024 * 1024) }))));
    expect(bomb.length).toBeLessThan(1024 * 1024);
    const r = await postBytes("/api/admin/feature/message", bomb, "gzip");
    expect(r.status).toBe(413);
    expect(await r.json()).toMatchObject({ status: 413, detail: "request body larger than 1048576 bytes" });
  });

  it("D6 a body that is not what its Content-Encoding says is a 400", async () => {
    const r = await postBytes("/api/admin/feature/message", Buffer.from(JSON.stringify(draft())), "gzip");
    expect(r.status).toBe(400);
    expect(await r.json()).toMatchObject({ status: 400, detail: "request body is not valid gzip" });
  });

  it("D6 an unknown Content-Encoding is a 415 whose Accept-Encoding names the accepted ones", async () => {
    const r = await postBytes("/api/admin/feature/message", Buffer.from(JSON.stringify(draft())), "compress");
    expect(r.status).toBe(415);
    expect(r.headers.get("accept-encoding")).toBe(["identity", ...encoders.map(([e]) => e)].join(", "));
    expect(await r.json()).toMatchObject({ status: 415 });
  });

  it("D6 value uploads accept bodies above 1 MiB (their limit is 64 MiB)", async () => {
    const ts = tsApi(server, await server.key(TS_RW));
    const dataset = await ts.dataset();
    const series = await ts.series(dataset);
    const rows = makeRows(60_000);
    expect(JSON.stringify({ data: rows }).length).toBeGreaterThan(1024 * 1024);
    const r = await ts.call("POST", `/api/ts/dataset/${dataset}/timeseries/${series}/values`, { data: rows });
    expect(r).toEqual({ status: 200, json: { count: 60_000 } });
  });

  it("D8 malformed JSON is a 400 problem naming the body", async () => {
    const r = await post("/api/admin/feature/message", "{nope", "application/json");
    expect(r.status).toBe(400);
    const p = (await r.json()) as { errors: Record<string, string[]> };
    expect(Object.keys(p.errors)).toEqual(["body"]);
  });

  it("D6 D59 unknown JSON fields are a 400 naming each (no longer ignored)", async () => {
    const body = {
      type: "Warning",
      title: "t",
      startDate: "2030-01-01T00:00:00Z",
      expiringDate: "2031-01-01T00:00:00Z",
      surprise: { nested: 1 },
      whatever: [1, 2],
    };
    const r = await post("/api/admin/feature/message", JSON.stringify(body), "application/json");
    expect(r.status).toBe(400);
    expect(Object.keys((await r.json()).errors).sort()).toEqual(["surprise", "whatever"]);
  });
});

describe("D7 responses are JSON whatever Accept says", () => {
  it("D7 Accept: text/plain still gets application/json", async () => {
    const r = await fetch(`${server.url}/healthz`, { headers: { accept: "text/plain" } });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(await r.json()).toEqual({ status: "ok" });
    const p = await fetch(`${server.url}/api/admin/feature/x/message?limit=zero`, { headers: { ...headers, accept: "text/plain" } });
    expect(p.status).toBe(400);
    expect(p.headers.get("content-type")).toBe("application/problem+json; charset=utf-8");
    expect(await p.json()).toMatchObject({ status: 400, errors: { limit: expect.any(Array) } });
  });
});

describe("D47 an answer to a key is the key's: Cache-Control private", () => {
  it("D47 REST answers of authenticated routes say private, no-cache: a shared cache (Varnish keeps 200s for 2 minutes by default) must not give one key's answer to another; a 304 says it too", async () => {
    const listed = await fetch(`${server.url}/api/admin/feature/cc/message`, { headers });
    expect(listed.status).toBe(200);
    expect(listed.headers.get("cache-control")).toBe("private, no-cache");
    const again = await fetch(`${server.url}/api/admin/feature/cc/message`, {
      headers: { ...headers, "if-none-match": listed.headers.get("etag")! },
    });
    expect([again.status, again.headers.get("cache-control")]).toEqual([304, "private, no-cache"]);
    const ts = tsApi(server, await server.key(TS_RW));
    const d = await ts.dataset();
    const s = await ts.series(d);
    await ts.upload(d, s, makeRows(3));
    const values = await fetch(`${server.url}/api/ts/dataset/${d}/timeseries/${s}/values`, {
      headers: {
        "svc-open-api-key": await server.key(TS_RW),
        "svc-service-id": "timeseries",
        "svc-project-id": "proj-a",
        "svc-dataset-id": d,
      },
    });
    expect([values.status, values.headers.get("cache-control")]).toEqual([200, "private, no-cache"]);
    // A refusal too: a 404 may be this caller's alone (D61).
    const missing = await fetch(`${server.url}/api/admin/feature/cc/message/999999`, { headers });
    expect([missing.status, missing.headers.get("cache-control")]).toEqual([404, "private, no-cache"]);
    // What needs no credentials keeps its own: the health check and the document.
    expect((await fetch(`${server.url}/openapi.json`)).headers.get("cache-control")).toBe("no-cache");
  });
});

describe("D5 a 201 says where its resource is read", () => {
  it("D5 a created message, dataset and series come with a Location that a GET answers with the same resource", async () => {
    const created = await post("/api/admin/feature/located/message", JSON.stringify(draft({ title: "Located" })), "application/json");
    expect(created.status).toBe(201);
    const id = ((await created.json()) as { id: number }).id;
    expect(created.headers.get("location")).toBe(`/api/admin/feature/located/message/${id}`);
    const read = await fetch(server.url + created.headers.get("location")!, { headers });
    expect(((await read.json()) as { id: number }).id).toBe(id);

    const tsKey = await server.key(TS_RW);
    const tsHeaders = {
      "svc-open-api-key": tsKey,
      "svc-service-id": "timeseries",
      "svc-project-id": "proj-a",
      "content-type": "application/json",
    };
    const dataset = await fetch(`${server.url}/api/ts/dataset`, {
      method: "POST",
      headers: tsHeaders,
      body: JSON.stringify({ timeSeriesProperties: [] }),
    });
    expect(dataset.status).toBe(201);
    const d = ((await dataset.json()) as { id: string }).id;
    expect(dataset.headers.get("location")).toBe(`/api/ts/dataset/${d}`);
    const ts = tsApi(server, tsKey);
    const series = await fetch(`${server.url}/api/ts/dataset/${d}/timeseries`, {
      method: "POST",
      headers: { ...tsHeaders, "svc-dataset-id": d },
      body: JSON.stringify({ item: { name: "L", dataType: "Single" }, dataFields: [{ name: "value", dataType: "Single" }] }),
    });
    expect(series.status).toBe(201);
    const s = ((await series.json()) as { id: string }).id;
    expect(series.headers.get("location")).toBe(`/api/ts/dataset/${d}/timeseries/${s}`);
    expect((await ts.call("GET", series.headers.get("location")!)).json.id).toBe(s);
  });

  it("D5 a 201 whose resource no GET reads (a global message: read by id over RPC only) has no Location", async () => {
    const created = await post("/api/admin/feature/message", JSON.stringify(draft({ title: "Global" })), "application/json");
    expect(created.status).toBe(201);
    expect(created.headers.get("location")).toBeNull();
  });
});

describe("D8 errors are problem details", () => {
  it("D8 404 for an unknown path", async () => {
    const r = await fetch(`${server.url}/api/nothing/here`, { headers });
    expect(r.status).toBe(404);
    expect(await r.json()).toMatchObject({ type: "about:blank", title: "Not Found", status: 404 });
  });

  it("D8 405 with Allow for a known path and another method", async () => {
    const r = await fetch(`${server.url}/api/admin/feature/message`, { method: "PUT", headers });
    expect(r.status).toBe(405);
    expect(r.headers.get("allow")).toBe("GET, POST");
  });

  it("D8 401 with WWW-Authenticate and no stack trace", async () => {
    const r = await fetch(`${server.url}/api/admin/feature/message`);
    expect(r.status).toBe(401);
    expect(r.headers.get("www-authenticate")).toBeTruthy();
    const text = await r.text();
    expect(text).not.toMatch(/at .*\.(js|ts):\d+/);
    expect(JSON.parse(text)).toMatchObject({ status: 401, title: "Unauthorized", code: "unauthenticated" });
  });

  it("D8 a query parameter of the wrong type is a 400 naming the field", async () => {
    const r = await fetch(`${server.url}/api/admin/feature/app/message?limit=1.5`, { headers });
    expect(r.status).toBe(400);
    const p = (await r.json()) as { errors: Record<string, string[]>; detail: string };
    expect(Object.keys(p.errors)).toEqual(["limit"]);
    expect(p.detail).toContain("limit");
  });

  it.each(["0x2", "2e0", "02", "+2", "2.0", " 2"])(
    "D21 an integer query parameter in another form than decimal digits (limit=%s) is a 400 naming it",
    async (limit) => {
      const r = await fetch(`${server.url}/api/admin/feature/app/message?limit=${encodeURIComponent(limit)}`, { headers });
      expect(r.status).toBe(400);
      const p = (await r.json()) as { errors: Record<string, string[]> };
      expect(Object.keys(p.errors)).toEqual(["limit"]);
    },
  );

  it("D21 a decimal limit is taken as it is written", async () => {
    expect((await fetch(`${server.url}/api/admin/feature/app/message?limit=2`, { headers })).status).toBe(200);
  });

  it("D8 malformed percent-encoding in the path is a 400", async () => {
    const r = await fetch(`${server.url}/api/admin/feature/%E0%A4%A/message`, { headers });
    expect(r.status).toBe(400);
    expect(r.headers.get("content-type")).toBe("application/problem+json; charset=utf-8");
  });
});

describe("D9 api-version", () => {
  it.each(["2", "3", " 3 "])("D9 accepts api-version %j", async (v) => {
    const title = `Listed with api-version ${JSON.stringify(v)}`;
    expect((await post("/api/admin/feature/message", JSON.stringify(draft({ title })), "application/json")).status).toBe(201);
    const r = await fetch(`${server.url}/api/admin/feature/message?limit=1000`, { headers: { ...headers, "api-version": v } });
    expect(r.status).toBe(200);
    const page = (await r.json()) as { data: { title: string }[]; cursor: string | null };
    expect(page.cursor).toBeNull();
    expect(page.data.map((m) => m.title)).toContain(title);
  });

  it.each(["1", "4", "2.0", "abc", ""])("D9 refuses api-version %j with 400", async (v) => {
    const r = await fetch(`${server.url}/api/admin/feature/message`, { headers: { ...headers, "api-version": v } });
    expect(r.status).toBe(400);
    const p = (await r.json()) as { errors: Record<string, string[]> };
    expect(Object.keys(p.errors)).toEqual(["api-version"]);
  });
});
