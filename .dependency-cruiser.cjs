// The import rule of src/ (issue 27; README "Layout"): five floors, lowest first, and an
// import may point to its own floor or one below, never up, and never round in a cycle.
//   1 base       core/ config/ log/ metrics/ runtime/ native/ gen/ version.ts
//   2 domains    auth/ featurestatus/ timeseries/   (rules, store interfaces, services)
//   3 backends   sqlite/ postgres/                  (the stores of each SQL dialect)
//   4 transport  transport/                         (HTTP, Connect, REST, OpenAPI, SSE delivery)
//   5 app        app/ cli/                          (composition: opens a backend, wires it all)
//                and each service's REST face beside it (*-rest-docs.ts, *-json-shapes.ts in a domain's folder):
//                OpenAPI text and JSON shape rules that the composition hands the transport
// Type-only imports count (tsPreCompilationDeps): a type pointing up ties the floors as much as a value.
const BASE = "^src/(core|config|log|metrics|runtime|native|gen)/|^src/version\\.ts$";
const DOMAINS = "^src/(auth|featurestatus|timeseries)/";
const BACKENDS = "^src/(sqlite|postgres)/";
const TRANSPORT = "^src/transport/";
const REST_FACES = "^src/(featurestatus|timeseries)/[^/]+-(rest-docs|json-shapes)\\.ts$";
const APP = `^src/app/|^src/cli/|${REST_FACES}`;

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
    up("backends-import-no-transport-or-app", BACKENDS, TRANSPORT, APP),
    up("transport-imports-no-backend-or-app", TRANSPORT, BACKENDS, APP),
    {
      name: "auth-imports-only-core-config-log",
      severity: "error",
      comment: "auth/ is the domain the others and transport lean on: it stands on core, config and log alone",
      from: { path: "^src/auth/" },
      to: { path: "^src/", pathNot: "^src/(auth|core|config|log|gen)/" },
    },
    ...apart("featurestatus", "timeseries", "the two domains share only what is in core/"),
    ...apart("sqlite", "postgres", "a dialect never uses the other's code; what both need lives in core/ or the domain"),
  ],
  options: {
    includeOnly: "^src/",
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { extensions: [".ts", ".js"] },
  },
};
