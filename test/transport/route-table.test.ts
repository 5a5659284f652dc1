// One table of cases for the REST route matching, in the manner of hono's
// shared router tests: each row is a request and what must match. The routes
// are the served protos' google.api.http bindings, read from their descriptors.
import { getOption, hasOption, type DescService } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { http } from "../../src/gen/google/api/annotations_pb.js";
import { FeatureStatusService } from "../../src/gen/meridian/featurestatus/v1/feature_status_pb.js";
import { TimeSeriesService } from "../../src/gen/meridian/timeseries/v1/time_series_pb.js";
import { capturedSegments, parsePathTemplate, TemplateError } from "../../src/transport/rest/path-template.js";
import { RouteTrie, DuplicateRouteError } from "../../src/transport/rest/route-trie.js";

/** Every [method, template] the protos bind, additional bindings included. */
function protoRoutes(services: DescService[]): [string, string][] {
  return services.flatMap((service) =>
    service.methods.flatMap((m) => {
      if (!hasOption(m, http)) return [];
      const top = getOption(m, http);
      return [top, ...top.additionalBindings].map((rule): [string, string] => {
        if (rule.pattern.case === undefined || rule.pattern.case === "custom") throw new Error(`${m.name}: unexpected http rule`);
        return [rule.pattern.case.toUpperCase(), rule.pattern.value];
      });
    }),
  );
}

/** Not in the protos: templates that exercise the trie's multi-segment and literal-in-variable matching. */
const SYNTHETIC_ROUTES: [string, string][] = [
  ["GET", "/files/{name=**}"],
  ["GET", "/v1/{name=shelves/*}/books"],
];

const ROUTES: [string, string][] = [...protoRoutes([FeatureStatusService, TimeSeriesService]), ...SYNTHETIC_ROUTES];

type Expect = { route: string; vars?: Record<string, string> } | { status: 404 } | { status: 405; allow: string[] };

const CASES: [string, string, Expect][] = [
  ["GET", "/api/admin/feature/app1/message", { route: "GET /api/admin/feature/{feature_id}/message", vars: { feature_id: "app1" } }],
  ["GET", "/api/admin/feature/message", { route: "GET /api/admin/feature/message" }],
  // literal "message" beats the variable, for the method that has it
  ["PATCH", "/api/admin/feature/message/7", { route: "PATCH /api/admin/feature/message/{message_id}", vars: { message_id: "7" } }],
  // ...and backtracks to the variable when only the variable route has the method
  ["GET", "/api/admin/feature/message/message", { route: "GET /api/admin/feature/{feature_id}/message", vars: { feature_id: "message" } }],
  [
    "PATCH",
    "/api/admin/feature/app1/message/9",
    { route: "PATCH /api/admin/feature/{feature_id}/message/{message_id}", vars: { feature_id: "app1", message_id: "9" } },
  ],
  ["PUT", "/api/admin/feature/app1/message", { status: 405, allow: ["GET", "POST"] }],
  [
    "GET",
    "/api/admin/feature/app1/message/9",
    { route: "GET /api/admin/feature/{feature_id}/message/{message_id}", vars: { feature_id: "app1", message_id: "9" } },
  ],
  ["PUT", "/api/admin/feature/app1/message/9", { status: 405, allow: ["DELETE", "GET", "PATCH"] }],
  ["GET", "/api/ts/dataset/d1/timeseries/list", { route: "GET /api/ts/dataset/{dataset_id}/timeseries/list", vars: { dataset_id: "d1" } }],
  [
    "GET",
    "/api/ts/dataset/d1/timeseries/s1",
    { route: "GET /api/ts/dataset/{dataset_id}/timeseries/{time_series_id}", vars: { dataset_id: "d1", time_series_id: "s1" } },
  ],
  ["POST", "/api/ts/dataset/d1/timeseries/values", { route: "POST /api/ts/dataset/{dataset_id}/timeseries/values" }],
  // "values" as a series id for GET: the variable route
  [
    "GET",
    "/api/ts/dataset/d1/timeseries/values",
    { route: "GET /api/ts/dataset/{dataset_id}/timeseries/{time_series_id}", vars: { time_series_id: "values" } },
  ],
  ["GET", "/api/ts/dataset/d1/timeseries/s1/values", { route: "GET /api/ts/dataset/{dataset_id}/timeseries/{time_series_id}/values" }],
  ["GET", "/api/ts/dataset", { status: 405, allow: ["POST"] }],
  // RFC 9110, 9.3.2: HEAD wherever GET is, by GET's route (and GET's backtracking)
  ["HEAD", "/api/ts/dataset/d1/timeseries/s1/values", { route: "GET /api/ts/dataset/{dataset_id}/timeseries/{time_series_id}/values" }],
  ["HEAD", "/api/admin/feature/message/message", { route: "GET /api/admin/feature/{feature_id}/message", vars: { feature_id: "message" } }],
  ["HEAD", "/api/ts/dataset", { status: 405, allow: ["POST"] }],
  ["GET", "/api/ts", { status: 404 }],
  [
    "POST",
    "/api/ts/dataset/d1/timeseries/query",
    { route: "POST /api/ts/dataset/{dataset_id}/timeseries/query", vars: { dataset_id: "d1" } },
  ],
  ["POST", "/api/ts/dataset/d1/timeseries", { route: "POST /api/ts/dataset/{dataset_id}/timeseries", vars: { dataset_id: "d1" } }],
  [
    "POST",
    "/api/ts/dataset/d1/timeseries/s1/values",
    { route: "POST /api/ts/dataset/{dataset_id}/timeseries/{time_series_id}/values", vars: { time_series_id: "s1" } },
  ],
  ["PUT", "/api/ts/dataset/d1/timeseries/s1/values", { status: 405, allow: ["DELETE", "GET", "POST"] }],
  ["GET", "/api/ts/dataset/d1/", { status: 404 }],
  ["GET", "/nope", { status: 404 }],
  ["GET", "/files/a/b/c", { route: "GET /files/{name=**}", vars: { name: "a/b/c" } }],
  ["GET", "/v1/shelves/s1/books", { route: "GET /v1/{name=shelves/*}/books", vars: { name: "shelves/s1" } }],
  ["GET", "/v1/racks/s1/books", { status: 404 }],
];

function buildTrie() {
  const trie = new RouteTrie<{ key: string; template: ReturnType<typeof parsePathTemplate> }>();
  for (const [method, source] of ROUTES) {
    const template = parsePathTemplate(source);
    trie.add(method, template, { key: `${method} ${source}`, template });
  }
  return trie;
}

describe("D5 REST route matching from templates", () => {
  const trie = buildTrie();
  it.each(CASES)("%s %s", (method, path, expected) => {
    const result = trie.match(method, path.split("/").slice(1));
    if ("route" in expected) {
      expect(result.kind).toBe("found");
      if (result.kind !== "found") return;
      expect(result.route.key).toBe(expected.route);
      for (const [name, value] of Object.entries(expected.vars ?? {})) {
        const v = result.route.template.variables.find((x) => x.fieldPath === name)!;
        expect(capturedSegments(result.route.template, v, result.segments).join("/")).toBe(value);
      }
    } else if (expected.status === 405) {
      expect(result).toEqual({ kind: "method-not-allowed", allowed: expected.allow });
    } else {
      expect(result).toEqual({ kind: "not-found" });
    }
  });

  it("refuses a method bound twice to the same template", () => {
    const trie2 = new RouteTrie<string>();
    trie2.add("GET", parsePathTemplate("/a/{x}"), "one");
    expect(() => trie2.add("GET", parsePathTemplate("/a/{y}"), "two")).toThrow(DuplicateRouteError);
  });

  it.each(["a/b", "/a/{x", "/a//b", "/a/{x}/{x}", "/a/**/b", "/a/b:verb", "/a/{1x}"])("refuses the malformed template %s", (t) => {
    expect(() => parsePathTemplate(t)).toThrow(TemplateError);
  });
});
