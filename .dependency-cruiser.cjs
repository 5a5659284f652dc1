// The import rule of src/ (issue 27; README "Layout"): five floors, lowest first, and an
// import may point to its own floor or one below, never up, and never round in a cycle.
//   1 base       kernel/ http/ config/ log/ metrics/ runtime/ native/ gen/ version.ts
//   2 domains    auth/ featurestatus/ timeseries/   (rules, store interfaces, services)
//   3 backends   sqlite/ postgres/                  (the stores of each SQL dialect)
//   4 transport  transport/                         (HTTP, Connect, REST, OpenAPI, SSE delivery)
//   5 app        app/ cli/                          (composition: opens a backend, wires it all)
//                and each service's REST face beside it (*-rest-docs.ts, *-json-shapes.ts in a domain's folder):
//                OpenAPI text and JSON shape rules that the composition hands the transport
// Within the base, kernel/ is the domains' kernel (errors and reasons, ids, time, cursor sealing, the unit
// of work, a long-lived answer's outlet) and http/ the HTTP floor (node types, outlets, SSE framing,
// problem+json, media types, the REST JSON writer): the transport's, which no domain or backend imports (issue 40).
// Type-only imports count (tsPreCompilationDeps): a type pointing up ties the floors as much as a value.
const BASE = "^src/(kernel|http|config|log|metrics|runtime|native|gen)/|^src/version\\.ts$";
const DOMAINS = "^src/(auth|featurestatus|timeseries)/";
const BACKENDS = "^src/(sqlite|postgres)/";
const TRANSPORT = "^src/transport/";
const REST_FACES = "^src/(featurestatus|timeseries)/[^/]+-(rest-docs|json-shapes)\\.ts$";
const APP = `^src/app/|^src/cli/|${REST_FACES}`;
const HTTP = "^src/http/";
/**
 * Domain modules that still read HTTP facts, each until an item of issue 40 takes it over: the
 * columnar answers' media types and the api-version of value reads (item 1, one RPC per operation).
 * (Item 2 hands the domains what they read of a request through the kernel: a watch's outlet and client
 * address, kernel/long-answer.ts; an upload's raw body, kernel/upload-body.ts.)
 */
const HTTP_IN_DOMAINS_FOR_NOW = [
  "^src/timeseries/columnar/(formats|parquet)\\.ts$",
  "^src/timeseries/value-reads\\.ts$",
  // D69: the media types an upload's raw body may have (the body itself comes through kernel/upload-body.ts).
  "^src/timeseries/columnar/upload\\.ts$",
];

const up = (name, from, ...above) => ({
  name,
  severity: "error",
  comment: "an import may only point to its own floor or one below",
  from: { path: from },
  to: { path: above.join("|") },
});

/** Neither of two folders on one floor imports the other. */
const apart = (a, b, comment) =>
  [
    [a, b],
    [b, a],
  ].map(([from, to]) => ({
    name: `${from}-and-${to}-apart`,
    severity: "error",
    comment,
    from: { path: `^src/${from}/` },
    to: { path: `^src/${to}/` },
  }));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    { name: "no-circular", severity: "error", comment: "no module may reach itself through its imports", from: {}, to: { circular: true } },
    up("base-imports-nothing-above", BASE, DOMAINS, BACKENDS, TRANSPORT, APP),
    {
      ...up("domains-import-no-backend-transport-or-app", DOMAINS, BACKENDS, TRANSPORT, APP),
      from: { path: DOMAINS, pathNot: REST_FACES },
    },
    {
      name: "domains-and-backends-import-no-http",
      severity: "error",
      comment: "a domain or a storage adapter holds no HTTP: outlets, SSE framing, problem+json are the transport's",
      from: { path: `${DOMAINS}|${BACKENDS}`, pathNot: [REST_FACES, ...HTTP_IN_DOMAINS_FOR_NOW].join("|") },
      to: { path: HTTP },
    },
    up("backends-import-no-transport-or-app", BACKENDS, TRANSPORT, APP),
    up("transport-imports-no-backend-or-app", TRANSPORT, BACKENDS, APP),
    {
      name: "auth-imports-only-kernel-config-log",
      severity: "error",
      comment: "auth/ is the domain the others and transport lean on: it stands on the kernel, config and log alone",
      from: { path: "^src/auth/" },
      to: { path: "^src/", pathNot: "^src/(auth|kernel|config|log|gen)/" },
    },
    ...apart("featurestatus", "timeseries", "the two domains share only what is in kernel/"),
    ...apart("sqlite", "postgres", "a dialect never uses the other's code; what both need lives in kernel/ or the domain"),
  ],
  options: {
    includeOnly: "^src/",
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { extensions: [".ts", ".js"] },
  },
};
