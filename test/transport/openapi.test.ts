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
import { TimeSeriesService } from "../../src/gen/meridian/timeseries/v1/time_series_pb.js";
import { DOCS_CSP } from "../../src/transport/public-files.js";
import { NO_CHROMIUM, launchChromium } from "../helpers/browser.js";
import { checkAnswer } from "../helpers/openapi.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

let server: TestServer;
let doc: {
  openapi: string;
  paths: Record<string, Record<string, { parameters: { name: string; in: string; required?: boolean }[]; responses: Record<string, unknown>; security?: unknown[] }>>;
  components: { securitySchemes: Record<string, unknown>; schemas: Record<string, unknown> };
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
    return [top, ...top.additionalBindings].map((rule): [string, string] => [rule.pattern.case!, String(rule.pattern.value).replace(/\{([^}=]+)(=[^}]*)?\}/g, "{$1}")]);
  });
}

describe("D41 OpenAPI document", () => {
  it("D41 GET /openapi.json needs no credentials and is valid OpenAPI 3.1", async () => {
    expect(doc.openapi).toBe("3.1.0");
    const result = await new Validator().validate(doc as never);
    expect(result).toEqual({ valid: true });
  });

  it("D41 every google.api.http binding of the protos is an operation of the document, and nothing else is", () => {
    const expected = [...bindings(FeatureStatusService), ...bindings(TimeSeriesService)];
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
    expect(read.parameters.filter((p) => p.in === "query").map((p) => p.name).sort()).toEqual(["cursor", "from", "limit", "to"]);
    const create = doc.paths["/api/admin/feature/message"].post;
    expect(Object.keys(create.responses).sort()).toEqual(["201", "400", "401", "403", "404", "409", "413", "415", "503", "507"]);
    expect(create.responses["401"]).toEqual({ $ref: "#/components/responses/401" });
    expect(doc.components.schemas.Problem).toMatchObject({ required: ["type", "title", "status", "detail", "code", "reason"] });
  });

  it("D41 answers exactly as REST sends them: featureId may be null, value rows are arrays, a wrong answer is caught", async () => {
    const message = doc.components.schemas["meridian.featurestatus.v1.Message"] as { properties: Record<string, unknown> };
    expect(message.properties.featureId).toEqual({ anyOf: [{ type: "string" }, { type: "null" }] });
    // The checker every API helper runs: a real answer passes, an invented one does not.
    await checkAnswer(server.url, "GET", "/api/admin/feature/x/message", 200, "application/json", JSON.stringify({ data: [], cursor: null }));
    await expect(checkAnswer(server.url, "GET", "/api/admin/feature/x/message", 200, "application/json", JSON.stringify({ data: [{ id: "seven" }], cursor: null }))).rejects.toThrow(/does not match/);
    await expect(checkAnswer(server.url, "GET", "/api/ts/dataset/d/timeseries/s/values", 200, "application/json", JSON.stringify({ data: [[1, 2]] }))).rejects.toThrow(/does not match/);
    await checkAnswer(server.url, "GET", "/api/ts/dataset/d/timeseries/s/values", 200, "application/json", JSON.stringify({ data: [["2000-01-01T00:00:00", 1.5, null]] }));
    await expect(checkAnswer(server.url, "DELETE", "/api/admin/feature/message/1", 418, "application/json", "{}")).rejects.toThrow(/does not document/);
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

  it.skipIf(NO_CHROMIUM)(`D41 in Chromium /docs renders and lists every operation, with no CSP violation${NO_CHROMIUM ? ` (${NO_CHROMIUM})` : ""}`, async () => {
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      const violations: string[] = [];
      page.on("console", (m) => /Content.Security.Policy|Refused to/i.test(m.text()) && violations.push(m.text()));
      // Every violation the page reports, besides what Chromium logs (an init script is not bound by the page's CSP).
      await page.addInitScript(() => {
        (window as unknown as { violations: string[] }).violations = [];
        document.addEventListener("securitypolicyviolation", (e) => (window as unknown as { violations: string[] }).violations.push(`${e.violatedDirective} ${e.blockedURI}`));
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
  });
});
