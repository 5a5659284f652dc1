// D41 the REST API described: /openapi.json is OpenAPI 3.1 generated from the
// protos' google.api.http annotations (every binding is an operation), with
// the credentials, the headers, the answers exactly as REST sends them and
// the problem+json errors; every REST answer the suite's API helpers receive
// is checked against it (helpers/openapi.ts); /docs renders it in Chromium
// under a strict CSP, every file served by Meridian.
import { getOption, hasOption, type DescService } from "@bufbuild/protobuf";
import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { http } from "../../src/gen/google/api/annotations_pb.js";
import { FeatureStatusService } from "../../src/gen/meridian/featurestatus/v1/feature_status_pb.js";
import { MessageDeliveryService } from "../../src/gen/meridian/featurestatus/v1/message_delivery_pb.js";
import { TimeSeriesService } from "../../src/gen/meridian/timeseries/v1/time_series_pb.js";
import { DOCS_CSP } from "../../src/transport/public-files.js";
import { NO_CHROMIUM, launchChromium } from "../helpers/browser.js";
import { RW, api, draft } from "../helpers/messages.js";
import { checkAnswer } from "../helpers/openapi.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { TS_RW, tsApi } from "../helpers/timeseries.js";

let server: TestServer;
// Schemas are read loosely: the tests look into them by the document's own keys.
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as the comment above says
type Schema = Record<string, any>;
interface Operation {
  operationId: string;
  tags: string[];
  parameters: { name: string; in: string; required?: boolean; example?: unknown; schema: Schema; description?: string }[];
  requestBody?: { content: Record<string, { schema: Schema; example?: unknown }> };
  responses: Record<string, { content?: Record<string, { example?: unknown }> }>;
  security?: unknown[];
}
let doc: {
  openapi: string;
  info: Schema;
  servers: { url: string }[];
  tags: { name: string; description: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, unknown>; schemas: Record<string, Schema> };
};
beforeAll(async () => {
  server = await startTestServer();
  const r = await fetch(server.url + "/openapi.json");
  expect(r.status).toBe(200);
  doc = await r.json();
});
afterAll(() => server.close());

/** Every (HTTP method, OpenAPI path) the annotations of a service bind. */
function bindings(service: DescService): [string, string][] {
  return service.methods.flatMap((m) => {
    if (!hasOption(m, http)) return [];
    const top = getOption(m, http);
    return [top, ...top.additionalBindings].map((rule): [string, string] => [
      rule.pattern.case!,
      (rule.pattern.case === "custom" ? rule.pattern.value.path : (rule.pattern.value ?? "")).replace(/\{([^}=]+)(=[^}]*)?\}/g, "{$1}"),
    ]);
  });
}

describe("D41 OpenAPI document", () => {
  it("D41 GET /openapi.json needs no credentials and is valid OpenAPI 3.1", async () => {
    expect(doc.openapi).toBe("3.1.0");
    const result = await new Validator().validate(doc);
    expect(result).toEqual({ valid: true });
  });

  it("D41 every google.api.http binding of the protos is an operation of the document, and nothing else is", () => {
    const expected = [...bindings(FeatureStatusService), ...bindings(MessageDeliveryService), ...bindings(TimeSeriesService)];
    expect(expected.length).toBeGreaterThan(15);
    for (const [method, path] of expected) expect(doc.paths[path]?.[method], `${method} ${path}`).toBeDefined();
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m} ${path}`));
    expect(documented.sort()).toEqual(expected.map(([m, p]) => `${m} ${p}`).sort());
  });

  it("D41 both credentials, the D14 headers, api-version and the problem+json errors are described", () => {
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(["apiKey", "bearer"]);
    expect(doc.components.securitySchemes.apiKey).toMatchObject({ type: "apiKey", in: "header", name: "svc-open-api-key" });
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "bearer" });
    const read = doc.paths["/api/ts/dataset/{dataset_id}/timeseries/{time_series_id}/values"].get;
    const headers = read.parameters.filter((p) => p.in === "header").map((p) => [p.name, p.required ?? false]);
    expect(headers).toEqual([
      ["svc-service-id", true],
      ["svc-project-id", true],
      ["svc-dataset-id", true],
      ["api-version", false],
    ]);
    expect(
      read.parameters
        .filter((p) => p.in === "query")
        .map((p) => p.name)
        .sort(),
    ).toEqual(["cursor", "from", "limit", "to"]);
    const create = doc.paths["/api/admin/feature/message"].post;
    expect(Object.keys(create.responses).sort()).toEqual(["201", "400", "401", "403", "404", "409", "413", "415", "503", "507"]);
    expect(create.responses["401"]).toEqual({ $ref: "#/components/responses/401" });
    expect(doc.components.schemas.Problem).toMatchObject({ required: ["type", "title", "status", "detail", "code", "reason"] });
  });

  it("D41 answers exactly as REST sends them: featureId may be null, value rows are arrays, a wrong answer is caught", async () => {
    const message = doc.components.schemas["meridian.featurestatus.v1.Message"] as { properties: Record<string, unknown> };
    expect(message.properties.featureId).toMatchObject({ anyOf: [{ type: "string" }, { type: "null" }] });
    // The checker every API helper runs: a real answer passes, an invented one does not.
    await checkAnswer(
      server.url,
      "GET",
      "/api/admin/feature/x/message",
      200,
      "application/json",
      JSON.stringify({ data: [], cursor: null }),
    );
    await expect(
      checkAnswer(
        server.url,
        "GET",
        "/api/admin/feature/x/message",
        200,
        "application/json",
        JSON.stringify({ data: [{ id: "seven" }], cursor: null }),
      ),
    ).rejects.toThrow(/does not match/);
    await expect(
      checkAnswer(
        server.url,
        "GET",
        "/api/ts/dataset/d/timeseries/s/values",
        200,
        "application/json",
        JSON.stringify({ data: [["2000-01-01T00:00:00", "1.5"]] }),
      ),
    ).rejects.toThrow(/does not match/);
    await expect(
      checkAnswer(
        server.url,
        "GET",
        "/api/ts/dataset/d/timeseries/s/values",
        200,
        "application/json",
        JSON.stringify({ data: [["2000-01-01T00:00:00"]] }),
      ),
    ).rejects.toThrow(/does not match/);
    await checkAnswer(
      server.url,
      "GET",
      "/api/ts/dataset/d/timeseries/s/values",
      200,
      "application/json",
      JSON.stringify({ data: [["2000-01-01T00:00:00", 1.5, null]] }),
    );
    await expect(checkAnswer(server.url, "DELETE", "/api/admin/feature/message/1", 418, "application/json", "{}")).rejects.toThrow(
      /does not document/,
    );
  });
});

describe("D41 /docs", () => {
  it("D41 the page and its files are served by Meridian under a strict CSP, with no inline script or style", async () => {
    const page = await fetch(server.url + "/docs");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toBe(DOCS_CSP);
    expect(DOCS_CSP).not.toMatch(/unsafe|https?:/);
    const html = await page.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>|<style|\sstyle=|https?:\/\//);
    for (const src of [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1])) {
      const r = await fetch(server.url + src);
      expect([src, r.status]).toEqual([src, 200]);
      expect(r.headers.get("content-security-policy")).toBe(DOCS_CSP);
    }
  });

  it.skipIf(NO_CHROMIUM)(
    `D41 in Chromium /docs renders and lists every operation, with no CSP violation${NO_CHROMIUM ? ` (${NO_CHROMIUM})` : ""}`,
    async () => {
      const browser = await launchChromium();
      try {
        const page = await browser.newPage();
        const violations: string[] = [];
        page.on("console", (m) => /Content.Security.Policy|Refused to/i.test(m.text()) && violations.push(m.text()));
        // Every violation the page reports, besides what Chromium logs (an init script is not bound by the page's CSP).
        await page.addInitScript(() => {
          (window as unknown as { violations: string[] }).violations = [];
          document.addEventListener("securitypolicyviolation", (e) =>
            (window as unknown as { violations: string[] }).violations.push(`${e.violatedDirective} ${e.blockedURI}`),
          );
        });
        await page.goto(server.url + "/docs");
        await page.waitForSelector(".opblock", { timeout: 15_000 });
        violations.push(...(await page.evaluate(() => (window as unknown as { violations: string[] }).violations)));
        const operations = await page.$$eval(".opblock-summary-path", (els) => els.map((e) => e.getAttribute("data-path")));
        const expected = Object.values(doc.paths).reduce((n, ops) => n + Object.keys(ops).length, 0);
        expect(operations).toHaveLength(expected);
        expect(new Set(operations)).toEqual(new Set(Object.keys(doc.paths)));
        expect(violations).toEqual([]);
      } finally {
        await browser.close();
      }
    },
  );
});

/** An operation of the document by its operationId. */
function op(id: string): Operation {
  for (const ops of Object.values(doc.paths)) for (const o of Object.values(ops)) if (o.operationId === id) return o;
  throw new Error(`no operation ${id}`);
}
const param = (id: string, name: string) => op(id).parameters.find((p) => p.name === name)!;
const component = (schema: Schema) => doc.components.schemas[String(schema.$ref).split("/").pop()!];

describe("D59 the document states what the server enforces", () => {
  let a: ReturnType<typeof api>;
  let ts: ReturnType<typeof tsApi>;
  let dataset: string;
  let series: string;
  beforeAll(async () => {
    a = api(server, await server.key(RW));
    ts = tsApi(server, await server.key(TS_RW));
    dataset = await ts.dataset();
    series = await ts.series(dataset);
    await ts.upload(dataset, series, [["2026-01-01T00:00:00", 1.5, 0]]);
  });

  it("D59 a create body requires type, title, startDate and expiringDate, none nullable; a PATCH body requires nothing; the server agrees", async () => {
    for (const id of ["CreateFeatureMessage", "CreateGlobalMessage"]) {
      const create = component(op(id).requestBody!.content["application/json"].schema);
      expect(create.required).toEqual(["type", "title", "startDate", "expiringDate"]);
      expect(JSON.stringify(create)).not.toContain('"null"');
      expect(create.properties.featureId).toMatchObject({ deprecated: true });
    }
    for (const id of ["UpdateFeatureMessage", "UpdateGlobalMessage", "PreviewMessage"]) {
      const update = component(op(id).requestBody!.content["application/json"].schema);
      expect(update.required).toBeUndefined();
      expect(JSON.stringify(update)).not.toContain('"null"');
    }
    for (const field of ["type", "title", "startDate", "expiringDate"]) {
      const { [field]: _, ...rest } = draft();
      const r = await a.create("d59-required", rest);
      expect([field, r.status, Object.keys(r.json.errors)]).toEqual([field, 400, [field]]);
    }
    const created = await a.create("d59-required", draft({ body: undefined }));
    expect(created.status).toBe(201);
    expect((await a.update("d59-required", created.json.id, { title: "only this" })).status).toBe(200);
  });

  it("D59 the enums are the values the server takes: type exactly as spelled, expiry, sortBy and sortOrder in any case", async () => {
    const type = component(op("CreateFeatureMessage").requestBody!.content["application/json"].schema).properties.type;
    expect(type.enum).toEqual(["Critical", "Warning", "Informational"]);
    expect(type.description).not.toMatch(/case is ignored/i);
    for (const t of type.enum) expect((await a.create("d59-enums", draft({ type: t }))).status).toBe(201);
    expect((await a.create("d59-enums", draft({ type: "warning" }))).status).toBe(400);
    for (const name of ["expiry", "sortBy", "sortOrder"]) {
      const p = param("ListFeatureMessages", name);
      expect(p.description).toMatch(/case is ignored/i);
      for (const value of p.schema.enum as string[]) {
        for (const spelling of [value, value.toLowerCase(), value.toUpperCase()])
          expect([name, spelling, (await a.list("d59-enums", `${name}=${spelling}`)).status]).toEqual([name, spelling, 200]);
      }
      expect((await a.list("d59-enums", `${name}=Sideways`)).status).toBe(400);
    }
  });

  it("D59 a query condition requires type, name and operator, which the server refuses without; type and operator are enums, case ignored", async () => {
    const condition = doc.components.schemas["meridian.timeseries.v1.QueryCondition"];
    expect(condition.required).toEqual(["type", "name", "operator"]);
    expect(condition.properties.type.enum).toEqual(["AttributeQueryCondition"]);
    expect(condition.properties.operator.enum).toEqual([
      "Equal",
      "NotEqual",
      "GreaterThan",
      "LessThan",
      "GreaterThanOrEqual",
      "LessThanOrEqual",
      "Contains",
      "StartsWith",
    ]);
    for (const name of ["type", "operator"]) expect(condition.properties[name].description).toMatch(/case is ignored/i);
    const query = (c: Record<string, string>) => ts.call("POST", `/api/ts/dataset/${dataset}/timeseries/query`, { conditions: [c] });
    const full = { type: "AttributeQueryCondition", name: "Item", operator: "Equal", value: "level" };
    expect((await query(full)).status).toBe(200);
    expect((await query({ ...full, type: "attributequerycondition", operator: "EQUAL" })).status).toBe(200);
    for (const field of ["type", "name", "operator"] as const) {
      const { [field]: _, ...rest } = full;
      expect([field, (await query(rest)).status]).toEqual([field, 400]);
    }
    const { value: _, ...noValue } = full;
    expect((await query(noValue)).status).toBe(200);
  });

  it("D59 limits: a page size has a minimum (the server refuses 0) and no maximum (the server clamps); value pages and chart widths have neither", async () => {
    for (const id of ["ListFeatureMessages", "ListGlobalMessages", "ListMessageAudit"]) {
      expect(param(id, "limit").schema).toMatchObject({ type: "integer", minimum: 1, default: 100 });
      expect(param(id, "limit").schema.maximum).toBeUndefined();
      expect(param(id, "limit").description).toMatch(/clamped/);
    }
    expect((await a.list("d59-limit", "limit=0")).status).toBe(400);
    expect((await a.list("d59-limit", "limit=1")).status).toBe(200);
    expect((await a.list("d59-limit", "limit=5000")).status).toBe(200);
    for (const [id, name] of [
      ["ReadValuesJson", "limit"],
      ["ReadManyValuesJson", "limit"],
      ["ReadChartJson", "width"],
      ["ReadManyChartJson", "width"],
    ]) {
      const p = param(id, name);
      expect([id, p.schema.minimum, p.schema.maximum]).toEqual([id, undefined, undefined]);
      expect(p.description).toMatch(/clamped/);
    }
    const values = `/api/ts/dataset/${dataset}/timeseries/${series}/values`;
    for (const q of ["limit=0", "limit=-5", "limit=99999999"])
      expect((await ts.call("GET", `${values}?${q}`, undefined, { "api-version": "3" })).status).toBe(200);
    for (const q of ["width=0", "width=99999999"]) expect((await ts.call("GET", `${values}/chart?${q}`)).status).toBe(200);
  });

  it("D59 feature ids: the path parameter's pattern is the server's rule", async () => {
    const pattern = new RegExp(param("ListFeatureMessages", "feature_id").schema.pattern, "u");
    for (const [id, ok] of [
      ["a".repeat(128), true],
      ["A-z_0.9", true],
      ["a".repeat(129), false],
      ["a%20b", false],
      ["%C3%A9t%C3%A9", false],
    ] as const) {
      expect([id, pattern.test(decodeURIComponent(id))]).toEqual([id, ok]);
      expect([id, (await a.list(id)).status]).toEqual([id, ok ? 200 : 400]);
    }
  });

  it("D59 message dates are date-time; time series ranges have the pattern of their own form, which is not date-time", async () => {
    const create = component(op("CreateFeatureMessage").requestBody!.content["application/json"].schema);
    expect(create.properties.startDate).toMatchObject({ type: "string", format: "date-time" });
    expect(create.properties.expiringDate).toMatchObject({ type: "string", format: "date-time" });
    expect(
      (await a.create("d59-dates", draft({ startDate: "2026-01-01T08:00:00+02:00", expiringDate: "2026-01-01T08:00:00.5Z" }))).status,
    ).toBe(201);
    expect((await a.create("d59-dates", draft({ startDate: "2026-01-01T08:00:00" }))).status).toBe(400);
    for (const id of ["ReadValuesJson", "ReadChartJson", "DeleteValues", "ReadManyValuesJson"]) {
      for (const name of ["from", "to"]) expect(param(id, name).schema.format).toBeUndefined();
    }
    const pattern = new RegExp(param("ReadValuesJson", "from").schema.pattern, "u");
    const values = `/api/ts/dataset/${dataset}/timeseries/${series}/values`;
    for (const [from, ok] of [
      ["2026-01-01T000000", true],
      ["2026-01-01T00:00:00", true],
      ["2026-01-01T00:00:00Z", true],
      ["2026-01-01T00:0000", false],
      ["2026-01-01T00:00:00+02:00", false],
      ["2026-01-01", false],
    ] as const) {
      expect([from, pattern.test(from)]).toEqual([from, ok]);
      expect([from, (await ts.call("GET", `${values}?from=${encodeURIComponent(from)}`)).status]).toEqual([from, ok ? 200 : 400]);
    }
  });

  it("D59 value rows have one item schema (timestamp, number or null) and no prefixItems, which openapi-typescript reads as [string]", async () => {
    expect(JSON.stringify(doc)).not.toContain("prefixItems");
    const upload = op("UploadValues").requestBody!.content["application/json"].schema.properties.data;
    expect(upload.items).toMatchObject({
      type: "array",
      minItems: 2,
      items: { oneOf: [{ type: "string" }, { type: "number" }, { type: "null" }] },
    });
    const read = (op("ReadValuesJson").responses["200"].content!["application/json"] as { schema: Schema }).schema.properties.data;
    expect(read.items).toMatchObject({
      type: "array",
      minItems: 2,
      items: { oneOf: [{ type: "string" }, { type: "number" }, { type: "null" }] },
    });
    // Both row forms of D24 may be uploaded, as the item schema says.
    const pattern = new RegExp(upload.items.items.oneOf[0].pattern, "u");
    for (const t of ["2026-01-02T000000", "2026-01-02T00:01:00Z"]) expect(pattern.test(t)).toBe(true);
    const r = await ts.call("POST", `/api/ts/dataset/${dataset}/timeseries/${series}/values`, {
      data: [
        ["2026-01-02T000000", 1, null],
        ["2026-01-02T00:01:00Z", null, 1],
      ],
    });
    expect(r).toMatchObject({ status: 200, json: { count: 2 } });
  });

  it("D59 servers, a licence, a described tag for every operation, and an example for each message and values operation", async () => {
    expect(doc.servers).toEqual([{ url: "/", description: expect.any(String) }]);
    expect(doc.info.license).toEqual({ name: "Proprietary" });
    const tags = new Map(doc.tags.map((t) => [t.name, t.description]));
    const operations = Object.values(doc.paths).flatMap((ops) => Object.values(ops));
    for (const o of operations) expect([o.operationId, o.tags.every((t) => tags.get(t))]).toEqual([o.operationId, true]);
    const messages = FeatureStatusService.methods.map((m) => m.name);
    const values = ["UploadValues", "ReadValuesJson", "ReadManyValuesJson", "ReadChartJson", "ReadManyChartJson", "DeleteValues"];
    for (const o of operations.filter((o) => messages.includes(o.operationId) || values.includes(o.operationId))) {
      const ok = Object.entries(o.responses).find(([status]) => status.startsWith("2"))![1];
      const examples = [
        ...Object.values(ok.content ?? {}).map((m) => m.example),
        ...Object.values(o.requestBody?.content ?? {}).map((m) => m.example),
        ...o.parameters.filter((p) => p.in !== "header").map((p) => p.example),
      ].filter((e) => e !== undefined);
      expect([o.operationId, examples.length > 0]).toEqual([o.operationId, true]);
      // An answer with a body has its example; so has a request body.
      if (ok.content) expect([o.operationId, Object.values(ok.content)[0].example !== undefined]).toEqual([o.operationId, true]);
      if (o.requestBody)
        expect([o.operationId, Object.values(o.requestBody.content)[0].example !== undefined]).toEqual([o.operationId, true]);
    }
    // The preview's example is what the server answers to it.
    const preview = op("PreviewMessage");
    const answer = await a.call("POST", "/api/admin/feature/message/preview", preview.requestBody!.content["application/json"].example);
    expect(answer.json).toEqual(preview.responses["200"].content!["application/json"].example);
  });
});
