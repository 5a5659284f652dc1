// D59 the OpenAPI document as generated clients read it (issue 39 items 5-7),
// held to real answers: every operation of the document is called on a real
// server (a BackOffice key; a person's token where only a person may), and
// each answer is checked against the document (helpers/openapi.ts: its
// status, media type and schema, required fields and additionalProperties
// false included), and its headers against the headers the document names for
// it, both ways. The values and chart reads answer the Arrow and Parquet media
// types the document lists for them, and only they do.
import { tableFromIPC } from "apache-arrow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RW, draft } from "../helpers/messages.js";
import { checkAnswer } from "../helpers/openapi.js";
import { bearer, signToken, startTestServer, type TestServer } from "../helpers/server.js";
import { TS_RW, tsHeaders } from "../helpers/timeseries.js";

// Schemas are read loosely: the tests look into them by the document's own keys.
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as the comment above says
type Schema = Record<string, any>;
interface Answer {
  description: string;
  $ref?: string;
  headers?: Record<string, unknown>;
  content?: Record<string, { schema: Schema }>;
}
interface Operation {
  operationId: string;
  parameters: { name: string; in: string; description?: string }[];
  responses: Record<string, Answer>;
}
interface Doc {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema>; responses: Record<string, Answer>; headers: Record<string, unknown> };
}

/** The answer headers a client needs (D5, D47, D62, D46): where the server sends one, the document names it. */
const TRACKED = ["etag", "location", "retry-after", "content-language", "vary"];
const ARROW = "application/vnd.apache.arrow.stream";
const PARQUET = "application/vnd.apache.parquet";

let server: TestServer;
let doc: Doc;
let key: string;
/** A person (D63: dismissals) who reads in German (D62). */
let person: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer({ MERIDIAN_WEBHOOK_HTTP_HOSTS: "127.0.0.1" });
  doc = await (await fetch(server.url + "/openapi.json")).json();
  key = await server.key({ roles: RW.roles, scopes: [...RW.scopes, ...TS_RW.scopes], projects: TS_RW.projects });
  person = bearer(await signToken({ client_id: "oa", scope: "platform_iam_featurestatus_read", iss: "https://id.example", sub: "alice" }));
});
afterAll(() => server?.close());

/** The operation a request reaches: its path template (literal segments first, as the router tries them) and method. */
function operationOf(method: string, path: string): Operation {
  const pathname = new URL(path, "http://x").pathname;
  const matches = Object.keys(doc.paths)
    .filter((t) => new RegExp("^" + t.replace(/\{[^}]+\}/g, "[^/]+") + "$").test(pathname) && doc.paths[t][method.toLowerCase()])
    .sort((a, b) => (a.match(/\{/g) ?? []).length - (b.match(/\{/g) ?? []).length);
  if (!matches.length) throw new Error(`no operation for ${method} ${path}`);
  return doc.paths[matches[0]][method.toLowerCase()];
}

/** The answer the document gives for a status (a shared one resolved). */
function documented(op: Operation, status: number): Answer | undefined {
  const a = op.responses[String(status)];
  return a?.$ref ? doc.components.responses[a.$ref.split("/").pop()!] : a;
}
const headersOf = (a: Answer | undefined) => Object.keys(a?.headers ?? {}).map((h) => h.toLowerCase());

interface Real {
  status: number;
  headers: Headers;
  text: string;
  bytes: Buffer;
  json: Schema;
}

/** Each operation's answers seen, by `operationId status`: the tracked headers each sent. */
const seen = new Map<string, Set<string>[]>();
/** The reads called, to ask again in another format: operationId → its request. */
const reads = new Map<string, { method: string; path: string; headers: Record<string, string>; body?: string }>();

/**
 * Calls `opId` as `method path` and checks the answer against the document:
 * its operation, status, media type, JSON schema, and every tracked header
 * it sends named there. An event stream is read to its first event.
 */
async function call(
  opId: string,
  method: string,
  path: string,
  opts: { body?: unknown; headers?: Record<string, string>; auth?: Record<string, string>; status: number; events?: boolean },
): Promise<Real> {
  const op = operationOf(method, path);
  expect(op.operationId, `${method} ${path}`).toBe(opId);
  const dataset = /^\/api\/ts\/dataset\/([^/?]+)/.exec(path)?.[1];
  const headers = {
    ...(opts.auth ?? (path.startsWith("/api/ts/") ? tsHeaders(key, dataset) : { "svc-open-api-key": key })),
    ...(opts.body === undefined ? {} : { "content-type": "application/json" }),
    ...opts.headers,
  };
  const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  const abort = new AbortController();
  const r = await fetch(server.url + path, { method, headers, body, signal: abort.signal });
  let bytes: Buffer;
  if (opts.events && r.status === 200) {
    // The first event, then the stream is left.
    let text = "";
    const reader = r.body!.getReader();
    while (!/event: .*\ndata: .*\n\n/.test(text)) {
      const { value, done } = await reader.read();
      if (done) break;
      text += Buffer.from(value).toString();
    }
    abort.abort();
    bytes = Buffer.from(text);
  } else {
    bytes = Buffer.from(await r.arrayBuffer());
  }
  const text = bytes.toString();
  expect([opId, r.status, text.slice(0, 300)]).toEqual([opId, opts.status, expect.any(String)]);
  await checkAnswer(server.url, method, path, r.status, r.headers.get("content-type"), text);
  const sent = new Set(TRACKED.filter((h) => r.headers.has(h)));
  const named = headersOf(documented(op, r.status));
  expect([opId, r.status, [...sent].filter((h) => !named.includes(h))]).toEqual([opId, r.status, []]);
  const k = `${opId} ${r.status}`;
  seen.set(k, [...(seen.get(k) ?? []), sent]);
  if (r.status < 300 && !opts.events && (method === "GET" || opId.startsWith("Read"))) reads.set(opId, { method, path, headers, body });
  const json = (r.headers.get("content-type") ?? "").includes("json") && text ? JSON.parse(text) : undefined;
  return { status: r.status, headers: r.headers, text, bytes, json };
}

/** Every operation, called as a client would, in an order that leaves each something to act on. */
async function callEveryOperation(): Promise<void> {
  const hook = await call("CreateWebhook", "POST", "/api/admin/feature/message/webhooks", {
    body: { url: "http://127.0.0.1:9/hook", secret: "a-long-random-secret", events: ["message.created"] },
    status: 201,
  });
  const german = { de: { title: "Wartung", body: "<b>bald</b>" } };
  const created = await call("CreateFeatureMessage", "POST", "/api/admin/feature/oa/message", {
    body: draft({ translations: german }),
    status: 201,
  });
  const id = created.json.id as number;
  const global = await call("CreateGlobalMessage", "POST", "/api/admin/feature/message", {
    body: draft({ translations: german }),
    status: 201,
  });
  const globalId = global.json.id as number;

  const list = await call("ListFeatureMessages", "GET", "/api/admin/feature/oa/message?lang=de&audience=staff", { status: 200 });
  await call("ListFeatureMessages", "GET", "/api/admin/feature/oa/message?lang=de&audience=staff", {
    headers: { "if-none-match": list.headers.get("etag")! },
    status: 304,
  });
  await call("ListGlobalMessages", "GET", "/api/admin/feature/message?expiry=All&lang=de&audience=staff", { status: 200 });
  await call("GetFeatureMessage", "GET", `/api/admin/feature/oa/message/${id}`, { status: 200 });
  await call("GetFeatureMessage", "GET", `/api/admin/feature/oa/message/${id}`, {
    auth: person,
    headers: { "accept-language": "de" },
    status: 200,
  });
  await call("PreviewMessage", "POST", "/api/admin/feature/message/preview", { body: { title: "<b>Soon</b>" }, status: 200 });
  await call("ListMessageAudit", "GET", "/api/admin/feature/message/audit?limit=5", { status: 200 });
  await call("WatchFeatureMessagesSse", "GET", "/api/admin/feature/oa/message/stream?lang=de", {
    auth: { "svc-open-api-key": await server.key(RW) },
    events: true,
    status: 200,
  });
  await call("WatchGlobalMessagesSse", "GET", "/api/admin/feature/message/stream", {
    auth: { "svc-open-api-key": await server.key(RW) },
    events: true,
    status: 200,
  });
  await call("GetFeatureMessageFeed", "GET", "/api/admin/feature/oa/message/feed.atom?lang=de&audience=staff", { status: 200 });
  await call("GetGlobalMessageFeed", "GET", "/api/admin/feature/message/feed.atom?lang=de&audience=staff", { status: 200 });
  await call("DismissFeatureMessage", "POST", `/api/admin/feature/oa/message/${id}/dismissal`, { auth: person, status: 204 });
  await call("DismissGlobalMessage", "POST", `/api/admin/feature/message/${globalId}/dismissal`, { auth: person, status: 204 });
  await call("ListWebhooks", "GET", "/api/admin/feature/message/webhooks", { status: 200 });
  await call("ListWebhookDeliveries", "GET", `/api/admin/feature/message/webhooks/${hook.json.id}/deliveries`, { status: 200 });

  // D47: If-Match, and the etag parameter that works as it does; a stale one is a 412 with the current ETag.
  const etag = created.headers.get("etag")!;
  const patched = await call("UpdateFeatureMessage", "PATCH", `/api/admin/feature/oa/message/${id}`, {
    body: { title: "Later" },
    headers: { "if-match": etag },
    status: 200,
  });
  await call("UpdateFeatureMessage", "PATCH", `/api/admin/feature/oa/message/${id}`, {
    body: { title: "Stale" },
    headers: { "if-match": etag },
    status: 412,
  });
  await call("UpdateFeatureMessage", "PATCH", `/api/admin/feature/oa/message/${id}?etag=${encodeURIComponent(etag)}`, {
    body: { title: "Stale" },
    status: 412,
  });
  await call("UpdateGlobalMessage", "PATCH", `/api/admin/feature/message/${globalId}`, { body: { title: "Later" }, status: 200 });
  await call("DeleteFeatureMessage", "DELETE", `/api/admin/feature/oa/message/${id}`, {
    headers: { "if-match": etag },
    status: 412,
  });

  // Time series: a dataset, a series with a Single and a Flag field, values written, read, charted, deleted.
  const dataset = await call("CreateDataset", "POST", "/api/ts/dataset", {
    body: { timeSeriesProperties: [{ name: "depth", dataType: "Double" }] },
    status: 201,
  });
  const ds = dataset.json.id as string;
  await call("GetDataset", "GET", `/api/ts/dataset/${ds}`, { status: 200 });
  const series = await call("CreateTimeSeries", "POST", `/api/ts/dataset/${ds}/timeseries`, {
    body: {
      item: { name: "Water level", unit: "m", item: "level", dataType: "Single", timeSeriesType: "Instantaneous" },
      properties: { depth: 2.5 },
      dataFields: [
        { name: "value", dataType: "Single" },
        { name: "flag", dataType: "Flag", flags: [{ id: 1, name: "suspect", level: 2 }] },
      ],
    },
    status: 201,
  });
  const ts = series.json.id as string;
  const values = `/api/ts/dataset/${ds}/timeseries/${ts}/values`;
  const rows = Array.from({ length: 20_000 }, (_, i) => [
    new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString().slice(0, 19),
    i / 4,
    i % 2,
  ]);
  await call("UploadValues", "POST", values, { body: { data: rows }, status: 200 });
  await call("UploadManyValues", "POST", `/api/ts/dataset/${ds}/values`, {
    body: { series: [{ timeSeriesId: ts, data: [["2027-01-01T00:00:00", 1.5, 0]] }] },
    status: 200,
  });
  await call("GetTimeSeries", "GET", `/api/ts/dataset/${ds}/timeseries/${ts}`, { status: 200 });
  await call("ListTimeSeries", "GET", `/api/ts/dataset/${ds}/timeseries/list`, { status: 200 });
  await call("QueryTimeSeries", "POST", `/api/ts/dataset/${ds}/timeseries/query`, {
    body: { conditions: [{ type: "AttributeQueryCondition", name: "Item", operator: "Equal", value: "level" }] },
    status: 200,
  });
  const page = await call("ReadValuesJson", "GET", `${values}?limit=16536`, { headers: { "api-version": "3" }, status: 200 });
  expect(page.json.cursor).toEqual(expect.any(String));
  await call("ReadValuesJson", "GET", values, { status: 200 });
  await call("ReadManyValuesJson", "POST", `/api/ts/dataset/${ds}/timeseries/values?limit=16536`, {
    body: [ts],
    headers: { "api-version": "3" },
    status: 200,
  });
  await call("ReadManyValuesJson", "POST", `/api/ts/dataset/${ds}/timeseries/values`, { body: [ts], status: 200 });
  await call("ReadChartJson", "GET", `${values}/chart?width=10`, { status: 200 });
  await call("ReadManyChartJson", "POST", `/api/ts/dataset/${ds}/timeseries/values/chart?width=10`, { body: [ts], status: 200 });
  await call("DeleteValues", "DELETE", `${values}?from=2026-01-01T00:00:00&to=2026-01-01T00:09:00`, { status: 204 });
  // Asked again after the deletes below, the reads would be 404s: the formats are asked for here.
  await askEveryReadForColumns();
  await call(
    "DeleteFeatureMessage",
    "DELETE",
    `/api/admin/feature/oa/message/${id}?etag=${encodeURIComponent(patched.headers.get("etag")!)}`,
    {
      status: 204,
    },
  );
  await call("DeleteGlobalMessage", "DELETE", `/api/admin/feature/message/${globalId}`, { status: 204 });
  await call("DeleteTimeSeries", "DELETE", `/api/ts/dataset/${ds}/timeseries/${ts}`, { status: 204 });
  await call("DeleteDataset", "DELETE", `/api/ts/dataset/${ds}`, { status: 204 });
  await call("DeleteWebhook", "DELETE", `/api/admin/feature/message/webhooks/${hook.json.id}`, { status: 204 });
}

/** What each read answered when asked for each columnar type (D64): the content type and the first bytes. */
const columnar = new Map<string, { type: string; status: number; bytes: Buffer }>();

async function askEveryReadForColumns(): Promise<void> {
  for (const [opId, r] of reads) {
    for (const type of [ARROW, PARQUET]) {
      const a = await fetch(server.url + r.path, { method: r.method, headers: { ...r.headers, accept: type }, body: r.body });
      const bytes = Buffer.from(await a.arrayBuffer());
      const contentType = a.headers.get("content-type") ?? "";
      columnar.set(`${opId} ${type}`, { type: contentType, status: a.status, bytes });
      if (contentType.includes("json")) await checkAnswer(server.url, r.method, r.path, a.status, contentType, bytes.toString());
    }
  }
}

describe("D59 the OpenAPI document against every operation's real answers (issue 39)", () => {
  beforeAll(callEveryOperation, 120_000);

  it("D59 every operation of the document was called and answered as documented", () => {
    const operations = Object.values(doc.paths).flatMap((ops) => Object.values(ops).map((o) => o.operationId));
    const succeeded = new Set([...seen.keys()].filter((k) => /\s2\d\d$/.test(k)).map((k) => k.split(" ")[0]));
    expect([...succeeded].sort()).toEqual(operations.sort());
  });

  it("D59 every response schema requires what the server always sends (issue 39 item 6)", () => {
    // The answers above passed with these required; a schema of an answer requires its fields, a request's its own.
    const message = doc.components.schemas["meridian.featurestatus.v1.Message"];
    expect(message.required.sort()).toEqual(Object.keys(message.properties).sort());
    expect(doc.components.schemas["meridian.timeseries.v1.DataField"].required).toEqual(["name", "dataType"]);
    expect(doc.components.schemas["meridian.timeseries.v1.DataFieldInput"].required).toBeUndefined();
    // Nullable fields sent as null are required and nullable.
    const delivery = doc.components.schemas["meridian.featurestatus.v1.WebhookDelivery"];
    expect(delivery.required).toContain("lastError");
    expect(delivery.properties.lastError.anyOf).toContainEqual({ type: "null" });
  });

  it("D59 an answer missing a required field, or with a field not described, fails the check", async () => {
    const path = "/api/admin/feature/message/webhooks";
    const hook = { id: "0b6f3c1e-6a57-4d43-9d58-3b1f1f0c9a11", url: "https://h.example/", events: [], createdAt: "2026-01-01T00:00:00Z" };
    await checkAnswer(server.url, "GET", path, 200, "application/json", JSON.stringify({ data: [hook] }));
    const { createdAt: _, ...missing } = hook;
    await expect(checkAnswer(server.url, "GET", path, 200, "application/json", JSON.stringify({ data: [missing] }))).rejects.toThrow(
      /required property 'createdAt'/,
    );
    await expect(
      checkAnswer(server.url, "GET", path, 200, "application/json", JSON.stringify({ data: [{ ...hook, extra: 1 }] })),
    ).rejects.toThrow(/additional properties/);
    await expect(
      checkAnswer(server.url, "GET", path, 200, "application/json", JSON.stringify({ data: [{ ...hook, id: "7" }] })),
    ).rejects.toThrow(/uuid/);
  });

  it("D59 ids the server holds to be GUIDs say format uuid", () => {
    const ops = Object.values(doc.paths).flatMap((o) => Object.values(o));
    for (const o of ops)
      for (const p of o.parameters.filter((p) => /^(dataset_id|time_series_id|webhook_id)$/.test(p.name)))
        expect([o.operationId, p.name, (p as unknown as { schema: Schema }).schema.format]).toEqual([o.operationId, p.name, "uuid"]);
    for (const name of ["meridian.timeseries.v1.Dataset", "meridian.timeseries.v1.TimeSeries", "meridian.featurestatus.v1.Webhook"])
      expect(doc.components.schemas[name].properties.id.format).toBe("uuid");
  });

  it("D5 D47 D62 the document names the answer headers each answer really sends, and sends each it names (issue 39 item 7)", () => {
    // Every tracked header sent was named (checked as each answer came); here: every one named was sent.
    for (const [k, answers] of seen) {
      const [opId, status] = k.split(" ");
      const op = Object.values(doc.paths)
        .flatMap((o) => Object.values(o))
        .find((o) => o.operationId === opId)!;
      const named = headersOf(documented(op, Number(status))).filter((h) => TRACKED.includes(h));
      const sent = new Set(answers.flatMap((a) => [...a]));
      expect([k, named.filter((h) => !sent.has(h))]).toEqual([k, []]);
    }
    // What a client of each needs, by name.
    const named = (opId: string, status: number) =>
      headersOf(
        documented(
          Object.values(doc.paths)
            .flatMap((o) => Object.values(o))
            .find((o) => o.operationId === opId)!,
          status,
        ),
      );
    expect(named("ListFeatureMessages", 200)).toEqual(expect.arrayContaining(["etag", "content-language", "vary"]));
    expect(named("ListFeatureMessages", 304)).toEqual(expect.arrayContaining(["etag", "vary"]));
    expect(named("UpdateFeatureMessage", 412)).toEqual(["etag"]);
    expect(named("CreateFeatureMessage", 201)).toEqual(expect.arrayContaining(["etag", "location"]));
    expect(named("CreateGlobalMessage", 201)).not.toContain("location"); // read by id over RPC only (D5)
    expect(named("CreateDataset", 201)).toContain("location");
    expect(named("WatchGlobalMessagesSse", 429)).toEqual(["retry-after"]);
    expect(headersOf(doc.components.responses["503"])).toEqual(["retry-after"]);
  });

  it("D47 the etag parameter of PATCH and DELETE is documented with its reason (If-Match as a field, for gRPC and Connect)", () => {
    for (const path of ["/api/admin/feature/{feature_id}/message/{message_id}", "/api/admin/feature/message/{message_id}"])
      for (const method of ["patch", "delete"]) {
        const p = doc.paths[path][method].parameters.find((q) => q.name === "etag")!;
        expect(p.description).toMatch(/If-Match/);
        expect(p.description).toMatch(/gRPC and Connect/);
      }
  });

  it("D64 the values and chart reads list Arrow and Parquet as bytes, and a request with the document's own media type answers them (issue 39 item 5)", () => {
    const binary = Object.values(doc.paths)
      .flatMap((o) => Object.values(o))
      .filter((o) => Object.keys(o.responses["200"]?.content ?? {}).some((t) => t !== "application/json" && t.includes("vnd.apache")));
    expect(binary.map((o) => o.operationId).sort()).toEqual(["ReadChartJson", "ReadManyChartJson", "ReadManyValuesJson", "ReadValuesJson"]);
    for (const o of binary) {
      const content = o.responses["200"].content!;
      expect([o.operationId, Object.keys(content)]).toEqual([o.operationId, ["application/json", ARROW, PARQUET]]);
      for (const type of [ARROW, PARQUET]) {
        expect(content[type].schema).toEqual({ type: "string", format: "binary" });
        const a = columnar.get(`${o.operationId} ${type}`)!;
        expect([o.operationId, a.status, a.type]).toEqual([o.operationId, 200, type]);
        if (type === PARQUET) expect([a.bytes.subarray(0, 4).toString(), a.bytes.subarray(-4).toString()]).toEqual(["PAR1", "PAR1"]);
        else expect(tableFromIPC(a.bytes).numRows).toBeGreaterThan(0);
      }
    }
    // Every other read answers what its document says (JSON, an event stream or a feed), whatever Accept asks.
    const others = [...columnar].filter(([k]) => !binary.some((o) => k.startsWith(o.operationId + " ")));
    expect(others.length).toBeGreaterThan(5);
    for (const [k, a] of others) expect([k, a.status, /json|atom/.test(a.type)]).toEqual([k, 200, true]);
  });
});

describe("D46 a stream refused for too many streams", () => {
  let limited: TestServer;
  beforeAll(async () => {
    limited = await startTestServer({ MERIDIAN_MAX_WATCHERS: "2", MERIDIAN_MAX_WATCHERS_PER_CLIENT: "1" });
  });
  afterAll(() => limited?.close());

  it("D46 D59 one credential's second stream is a 429, the server's third a 503, each with Retry-After, as the document says", async () => {
    const limitedDoc: Doc = await (await fetch(limited.url + "/openapi.json")).json();
    const open: AbortController[] = [];
    const stream = async (k: string) => {
      const abort = new AbortController();
      open.push(abort);
      return fetch(limited.url + "/api/admin/feature/message/stream", { headers: { "svc-open-api-key": k }, signal: abort.signal });
    };
    try {
      const [a, b, c] = [await limited.key(RW), await limited.key(RW), await limited.key(RW)];
      expect((await stream(a)).status).toBe(200);
      const tooMany = await stream(a);
      expect((await stream(b)).status).toBe(200);
      const full = await stream(c);
      const op = limitedDoc.paths["/api/admin/feature/message/stream"].get;
      for (const [r, status, reason] of [
        [tooMany, 429, "CLIENT_WATCHERS_EXHAUSTED"],
        [full, 503, "WATCHERS_EXHAUSTED"],
      ] as const) {
        const text = await r.text();
        expect([r.status, JSON.parse(text).reason]).toEqual([status, reason]);
        expect(r.headers.get("retry-after")).toMatch(/^[0-9]+$/);
        await checkAnswer(limited.url, "GET", "/api/admin/feature/message/stream", r.status, r.headers.get("content-type"), text);
        const answer = op.responses[String(status)];
        const described = answer.$ref ? limitedDoc.components.responses[answer.$ref.split("/").pop()!] : answer;
        expect(Object.keys(described.headers ?? {})).toEqual(["Retry-After"]);
      }
    } finally {
      for (const a of open) a.abort();
    }
  });
});
