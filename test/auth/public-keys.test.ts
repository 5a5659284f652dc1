// D60 public keys, through a real server over REST, Connect and gRPC
// (grpc-js), on the suite's backend: every route the OpenAPI document
// describes and every RPC of the served services is a 403 to a public key
// (driven from what is served, so a new route is covered without a change
// here), but the reads of the active messages of its features and the global
// ones; its origins are enforced and answered in CORS; the CLI makes and
// lists such keys and refuses bad ones in one line.
import { create, toBinary, type DescMethod, type DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SERVED_SERVICES } from "../../src/app/app.js";
import { FeatureStatusService } from "../../src/gen/meridian/featurestatus/v1/feature_status_pb.js";
import { grpcClientStream, grpcUnary, hostPort } from "../helpers/clients.js";
import { meridian } from "../helpers/cli.js";
import { RW, api, draft, iso } from "../helpers/messages.js";
import { openSse, nextEvent } from "../helpers/sse.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

/** What a public key may call (D60): the active messages' listings, streams and feeds (D63). Everything else is a 403. */
const ALLOWED = new Set([
  "ListFeatureMessages",
  "ListGlobalMessages",
  "WatchMessages",
  "WatchFeatureMessagesSse",
  "WatchGlobalMessagesSse",
  "GetFeatureMessageFeed",
  "GetGlobalMessageFeed",
]);
const SHOP = "https://shop.example";

let server: TestServer;
let writer: ReturnType<typeof api>;
/** A public key for orders, from any page; one for orders and checkout from SHOP's pages only. */
let anyPage: string;
let shopOnly: string;
let active: number;

beforeAll(async () => {
  server = await startTestServer({ MERIDIAN_CORS_ORIGINS: "https://admin.example" });
  writer = api(server, await server.key(RW));
  active = (await writer.create("orders", draft({ title: "Active" }))).json.id;
  await writer.create("orders", draft({ title: "Pending", startDate: iso(3600), expiringDate: iso(7200) }));
  await writer.create("orders", draft({ title: "Expired", startDate: iso(-7200), expiringDate: iso(-3600) }));
  await writer.create("other", draft({ title: "Another feature's" }));
  await writer.create(null, draft({ title: "Global" }));
  anyPage = await server.key({ clientId: "shop", publicKey: { features: ["orders"], origins: [] } });
  shopOnly = await server.key({ clientId: "shop", publicKey: { features: ["orders", "checkout"], origins: [SHOP] }, audiences: ["staff"] });
});
afterAll(() => server?.close());

const rest = (path: string, key: string, init: Omit<RequestInit, "headers"> & { headers?: Record<string, string> } = {}) =>
  fetch(server.url + path, { ...init, headers: { "svc-open-api-key": key, ...init.headers } });

async function problem(r: Response): Promise<{ status: number; reason?: string; contentType: string | null }> {
  const text = await r.text();
  return {
    status: r.status,
    reason: text ? JSON.parse(text).reason : undefined,
    contentType: r.headers.get("content-type")?.split(";")[0] ?? null,
  };
}

/** Every [HTTP method, path template, operation] the served OpenAPI document describes. */
async function describedRoutes(): Promise<[string, string, string][]> {
  const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, { operationId: string }>>;
  };
  return Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops)
      .filter(([m]) => ["get", "post", "patch", "put", "delete"].includes(m))
      .map(([m, op]): [string, string, string] => [m.toUpperCase(), path, op.operationId]),
  );
}

/** A path with its variables filled: the key's own feature, an active message of it, any id elsewhere. */
function filled(template: string): string {
  return template.replace(/\{([^}]+)\}/g, (_, name: string) =>
    /feature/i.test(name) ? "orders" : /message/i.test(name) ? String(active) : "x1",
  );
}

const publicHeader =
  (key: string): Interceptor =>
  (next) =>
  (req) => {
    req.header.set("svc-open-api-key", key);
    return next(req);
  };

/** Every method of the served services, with the request a page would send (its feature where the request names one). */
function servedMethods(): { method: DescMethod; request: Record<string, unknown> }[] {
  return SERVED_SERVICES.flatMap((s: DescService) => s.methods).map((method) => ({
    method,
    request: method.input.fields.some((f) => f.localName === "featureId") ? { featureId: "orders" } : {},
  }));
}

describe("D60 public keys: what they may read", () => {
  it("D60 every route the OpenAPI document describes is a 403 (PUBLIC_KEY_NOT_ALLOWED) to a public key, but the active messages' listings, streams and feeds", async () => {
    const routes = await describedRoutes();
    expect(routes.length).toBeGreaterThan(20);
    const answered: string[] = [];
    for (const [method, template, operation] of routes) {
      const abort = new AbortController();
      const r = await rest(filled(template), anyPage, {
        method,
        signal: abort.signal,
        headers: method === "GET" || method === "DELETE" ? {} : { "content-type": "application/json" },
        body: method === "GET" || method === "DELETE" ? undefined : "{}",
      });
      if (ALLOWED.has(operation)) {
        expect(r.status, `${method} ${template}`).toBe(200);
        abort.abort(); // a stream stays open
      } else {
        const p = await problem(r);
        expect(p, `${method} ${template}`).toEqual({
          status: 403,
          reason: "PUBLIC_KEY_NOT_ALLOWED",
          contentType: "application/problem+json",
        });
      }
      answered.push(`${method} ${template} ${r.status}`);
    }
    expect(answered.filter((a) => a.endsWith(" 200"))).toHaveLength(6); // two listings, two SSE streams, two feeds (D63)
  });

  it("D60 every RPC of the served services is PERMISSION_DENIED to a public key over Connect and gRPC, but the active messages' reads", async () => {
    const transport = createConnectTransport({ baseUrl: server.url, httpVersion: "2", interceptors: [publicHeader(anyPage)] });
    for (const { method, request } of servedMethods()) {
      const input = create(method.input, request);
      // Connect
      const client = createClient(method.parent, transport) as unknown as Record<string, (req: unknown, o?: object) => unknown>;
      const abort = new AbortController();
      let connectCode: Code | "ok";
      try {
        if (method.methodKind === "unary") await client[method.localName](input);
        else if (method.methodKind === "client_streaming")
          await client[method.localName](
            (async function* () {
              yield input;
            })(),
          );
        else for await (const _ of client[method.localName](input, { signal: abort.signal }) as AsyncIterable<unknown>) break;
        connectCode = "ok";
      } catch (e) {
        connectCode = ConnectError.from(e).code;
      }
      // gRPC (grpc-js)
      const grpcCode =
        method.methodKind === "unary"
          ? ((await grpcUnary(hostPort(server.url), method as never, request as never, { "svc-open-api-key": anyPage })).error?.code ??
            "ok")
          : method.methodKind === "client_streaming"
            ? ((await grpcClientStream(hostPort(server.url), method as never, [request as never], { "svc-open-api-key": anyPage })).error
                ?.code ?? "ok")
            : await grpcFirst(method, request, { "svc-open-api-key": anyPage });
      const expected = ALLOWED.has(method.name) ? "ok" : "denied";
      expect([method.name, connectCode === "ok" ? "ok" : connectCode === Code.PermissionDenied ? "denied" : Code[connectCode]]).toEqual([
        method.name,
        expected,
      ]);
      expect([method.name, grpcCode === "ok" ? "ok" : grpcCode === grpc.status.PERMISSION_DENIED ? "denied" : grpcCode]).toEqual([
        method.name,
        expected,
      ]);
    }
  });

  it("D60 a public key lists the active messages of its features and the global ones, and nothing else", async () => {
    const titles = async (path: string) =>
      ((await (await rest(path, anyPage)).json()) as { data: { title: string }[] }).data.map((m) => m.title).sort();
    // A feature's listing holds its own and the global messages (D13).
    expect(await titles("/api/admin/feature/orders/message")).toEqual(["Active", "Global"]);
    expect(await titles("/api/admin/feature/orders/message?expiry=nonexpired")).toEqual(["Active", "Global"]);
    expect(await titles("/api/admin/feature/message")).toEqual(["Global"]);
    for (const expiry of ["Pending", "Expired", "All"]) {
      expect(await problem(await rest(`/api/admin/feature/orders/message?expiry=${expiry}`, anyPage))).toMatchObject({
        status: 403,
        reason: "PUBLIC_KEY_NOT_ALLOWED",
      });
      expect(await problem(await rest(`/api/admin/feature/message?expiry=${expiry}`, anyPage))).toMatchObject({ status: 403 });
    }
    // Another feature's messages, on every protocol.
    expect(await problem(await rest("/api/admin/feature/other/message", anyPage))).toMatchObject({
      status: 403,
      reason: "PUBLIC_KEY_NOT_ALLOWED",
    });
    expect((await rest("/api/admin/feature/other/message/stream", anyPage)).status).toBe(403);
    const client = createClient(
      FeatureStatusService,
      createConnectTransport({ baseUrl: server.url, httpVersion: "2", interceptors: [publicHeader(anyPage)] }),
    );
    await expect(client.listFeatureMessages({ featureId: "other" })).rejects.toMatchObject({ code: Code.PermissionDenied });
    await expect(client.listFeatureMessages({ featureId: "orders", expiry: "All" })).rejects.toMatchObject({ code: Code.PermissionDenied });
    expect((await client.listFeatureMessages({ featureId: "orders" })).data.map((m) => m.title).sort()).toEqual(["Active", "Global"]);
    const watch = FeatureStatusService.method.watchMessages;
    expect(await grpcFirst(watch, { featureId: "other" }, { "svc-open-api-key": anyPage })).toBe(grpc.status.PERMISSION_DENIED);
    expect(await grpcFirst(watch, { featureId: "orders" }, { "svc-open-api-key": anyPage })).toBe("ok");
    const listed = await grpcUnary(
      hostPort(server.url),
      FeatureStatusService.method.listFeatureMessages,
      { featureId: "other" },
      {
        "svc-open-api-key": anyPage,
      },
    );
    expect(listed.error?.code).toBe(grpc.status.PERMISSION_DENIED);
  });

  it("D60 D46 a public key's stream sends the active set of its feature, and again when a write changes it", async () => {
    const s = await openSse(`${server.url}/api/admin/feature/orders/message/stream`, { "svc-open-api-key": anyPage });
    try {
      expect(s.status).toBe(200);
      expect((await nextEvent(s)).messages.map((m) => m.title).sort()).toEqual(["Active", "Global"]);
      await writer.create("orders", draft({ title: "Live" }));
      expect((await nextEvent(s)).messages.map((m) => m.title).sort()).toEqual(["Active", "Global", "Live"]);
    } finally {
      s.close();
    }
  });

  it("D60 D61 a key's features, origins and audiences are on its principal; a private key has none of the first two", async () => {
    const p = await server.app.backend.apiKeys.verify(shopOnly);
    expect(p).toMatchObject({
      clientId: "shop",
      roles: [],
      scopes: [],
      publicKey: { features: ["orders", "checkout"], origins: [SHOP] },
      audiences: ["staff"],
    });
    const priv = await server.app.backend.apiKeys.verify(await server.key({ scopes: ["platform_iam_featurestatus_read"] }));
    expect(priv?.publicKey).toBeUndefined();
    expect(priv?.audiences).toEqual([]);
  });
});

describe("D60 public keys: origins and CORS", () => {
  it("D60 with origins, a request from another Origin, or with none, is a 403 (ORIGIN_NOT_ALLOWED) on every protocol; from one of them it is served", async () => {
    const path = "/api/admin/feature/checkout/message";
    const ok = await rest(path, shopOnly, { headers: { origin: SHOP } });
    expect(ok.status).toBe(200);
    const elsewhere: Record<string, string>[] = [
      { origin: "https://evil.example" },
      { origin: "https://shop.example.evil.example" },
      {},
      { origin: "null" },
    ];
    for (const headers of elsewhere) {
      expect(await problem(await rest(path, shopOnly, { headers }))).toEqual({
        status: 403,
        reason: "ORIGIN_NOT_ALLOWED",
        contentType: "application/problem+json",
      });
    }
    const watch = FeatureStatusService.method.watchMessages;
    expect(await grpcFirst(watch, { featureId: "orders" }, { "svc-open-api-key": shopOnly, origin: "https://evil.example" })).toBe(
      grpc.status.PERMISSION_DENIED,
    );
    expect(await grpcFirst(watch, { featureId: "orders" }, { "svc-open-api-key": shopOnly, origin: SHOP })).toBe("ok");
    const connect = (origin: string) =>
      createClient(
        FeatureStatusService,
        createConnectTransport({
          baseUrl: server.url,
          httpVersion: "1.1",
          interceptors: [
            publicHeader(shopOnly),
            (next) => (req) => {
              req.header.set("origin", origin);
              return next(req);
            },
          ],
        }),
      );
    await expect(connect("https://evil.example").listGlobalMessages({})).rejects.toMatchObject({ code: Code.PermissionDenied });
    expect((await connect(SHOP).listGlobalMessages({})).data.map((m) => m.title)).toEqual(["Global"]);
    // The origin is checked before what is called: a write from the right page is still PUBLIC_KEY_NOT_ALLOWED.
    const write = await rest(path, shopOnly, { method: "POST", headers: { origin: SHOP, "content-type": "application/json" }, body: "{}" });
    expect(await problem(write)).toMatchObject({ status: 403, reason: "PUBLIC_KEY_NOT_ALLOWED" });
  });

  it("D60 D36 the CORS answer to a public key's call allows exactly its origins; the preflight allows the origins public keys serve", async () => {
    const path = "/api/admin/feature/orders/message";
    const allow = (r: Response) => r.headers.get("access-control-allow-origin");
    // The call: the key's origin is allowed, with the headers a page reads exposed.
    const ok = await rest(path, shopOnly, { headers: { origin: SHOP } });
    expect(allow(ok)).toBe(SHOP);
    expect(ok.headers.get("access-control-expose-headers")).toContain("etag");
    expect(ok.headers.get("vary")).toMatch(/Origin/i);
    // An origin of MERIDIAN_CORS_ORIGINS is not one of this key's: refused, and not allowed to read the refusal.
    const admin = await rest(path, shopOnly, { headers: { origin: "https://admin.example" } });
    expect(admin.status).toBe(403);
    expect(allow(admin)).toBeNull();
    // A key without origins is served from any page, and its answer allows that page.
    const anywhere = await rest(path, anyPage, { headers: { origin: "https://blog.example" } });
    expect([anywhere.status, allow(anywhere)]).toEqual([200, "https://blog.example"]);
    // A private key's answer follows MERIDIAN_CORS_ORIGINS alone.
    const reader = await server.key({ clientId: "orders", scopes: ["platform_iam_featurestatus_read"] });
    expect(allow(await rest(path, reader, { headers: { origin: "https://blog.example" } }))).toBeNull();
    expect(allow(await rest(path, reader, { headers: { origin: "https://admin.example" } }))).toBe("https://admin.example");
    // A wrong key from a page public keys serve: the 401 is readable there, so the page can say why.
    const wrong = await rest(path, "mrd_aaaaaaaaaaaa_" + "A".repeat(43), { headers: { origin: SHOP } });
    expect([wrong.status, allow(wrong)]).toEqual([401, SHOP]);

    // The preflight carries no key: it allows the origins some live public key serves, for GET and POST.
    const preflight = (origin: string) =>
      fetch(server.url + path, {
        method: "OPTIONS",
        headers: { origin, "access-control-request-method": "GET", "access-control-request-headers": "svc-open-api-key, last-event-id" },
      });
    const pre = await preflight(SHOP);
    expect(pre.status).toBe(204);
    expect(allow(pre)).toBe(SHOP);
    expect(pre.headers.get("access-control-allow-methods")).toBe("GET, POST");
    expect(pre.headers.get("access-control-allow-headers")).toContain("svc-open-api-key");
    expect(pre.headers.get("access-control-allow-headers")).toContain("last-event-id");
    // MERIDIAN_CORS_ORIGINS' preflight is as before (D36).
    expect((await preflight("https://admin.example")).headers.get("access-control-allow-methods")).toContain("PATCH");
  });

  it("D60 D36 with no public key that serves any page, the preflight of an origin none serves is refused (no Access-Control-Allow-Origin)", async () => {
    const own = await startTestServer();
    try {
      const { id } = await own.app.backend.apiKeys.create({
        clientId: "shop",
        roles: [],
        scopes: [],
        projects: [],
        publicKey: { features: ["orders"], origins: [SHOP] },
      });
      const preflight = (origin: string) =>
        fetch(`${own.url}/api/admin/feature/orders/message`, {
          method: "OPTIONS",
          headers: { origin, "access-control-request-method": "GET", "access-control-request-headers": "svc-open-api-key" },
        });
      expect((await preflight(SHOP)).headers.get("access-control-allow-origin")).toBe(SHOP);
      expect((await preflight("https://evil.example")).headers.get("access-control-allow-origin")).toBeNull();
      // Revoked: its origin is no longer served (PostgreSQL: once the change feed says so).
      await own.app.backend.apiKeys.revoke(id);
      await expect.poll(async () => (await preflight(SHOP)).headers.get("access-control-allow-origin")).toBeNull();
    } finally {
      await own.close();
    }
  });
});

describe("D60 meridian apikey create --public", () => {
  const env = () => ({ MERIDIAN_DB: server.db });

  it("D60 creates a public key that lists as public with its features, origins and audiences, and reads what it should", async () => {
    const created = meridian(
      [
        "apikey",
        "create",
        "--public",
        "--client-id",
        "shop",
        "--feature",
        "orders",
        "--feature",
        "checkout",
        "--origin",
        SHOP,
        "--audience",
        "staff",
      ],
      env(),
    );
    expect(created.status).toBe(0);
    const key = created.stdout.trim();
    expect(key).toMatch(/^mrd_[a-z0-9]{12}_/);
    const id = key.split("_")[1];
    expect(created.stderr).toContain(`created public API key ${id} for client shop`);
    const listed = JSON.parse(meridian(["apikey", "list", "--json"], env()).stdout) as Record<string, unknown>[];
    expect(listed.find((k) => k.id === id)).toMatchObject({
      kind: "public",
      clientId: "shop",
      roles: [],
      scopes: [],
      publicKey: { features: ["orders", "checkout"], origins: [SHOP] },
      audiences: ["staff"],
    });
    const line = meridian(["apikey", "list"], env())
      .stdout.split("\n")
      .find((l) => l.startsWith(id))!;
    expect(line.split("\t").slice(0, 3)).toEqual([id, "public", "shop"]);
    expect(line).toContain(`features=orders,checkout\torigins=${SHOP}\taudiences=staff`);
    const priv = meridian(["apikey", "list"], env())
      .stdout.split("\n")
      .find((l) => l.includes("\tprivate\t"));
    expect(priv).toBeDefined();

    expect((await rest("/api/admin/feature/orders/message", key, { headers: { origin: SHOP } })).status).toBe(200);
    expect((await rest("/api/admin/feature/orders/message", key, { headers: { origin: "https://evil.example" } })).status).toBe(403);
  });

  it.each([
    [["--public", "--client-id", "s"], "meridian apikey: --public needs at least one --feature: the features whose messages it reads"],
    [
      ["--public", "--client-id", "s", "--feature", "a b"],
      'meridian apikey: --feature "a b" is not a feature id: 1 to 128 characters of A-Z a-z 0-9 . _ -',
    ],
    [
      ["--public", "--client-id", "s", "--feature", "o", "--origin", "https://shop.example/banner"],
      'meridian apikey: --origin "https://shop.example/banner" has a path; an origin is scheme://host[:port] alone: https://shop.example',
    ],
    [
      ["--public", "--client-id", "s", "--feature", "o", "--origin", "https://Shop.Example:443"],
      'meridian apikey: --origin "https://Shop.Example:443" is not written as browsers send it; write https://shop.example',
    ],
    [
      ["--public", "--client-id", "s", "--feature", "o", "--origin", "shop.example"],
      'meridian apikey: --origin "shop.example" is not a URL origin; write scheme://host[:port], such as https://shop.example',
    ],
    [
      ["--public", "--client-id", "s", "--feature", "o", "--origin", "ftp://shop.example"],
      'meridian apikey: --origin "ftp://shop.example" is not an http or https origin',
    ],
    [
      ["--public", "--client-id", "s", "--feature", "o", "--scope", "platform_iam_featurestatus_read"],
      "meridian apikey: a --public key holds no --role, --scope or --project: what it may read is its --feature list",
    ],
    [
      ["--client-id", "s", "--feature", "o", "--role", "BackOffice"],
      "meridian apikey: --feature is for public keys: add --public (other keys read features by their client id)",
    ],
    [["--client-id", "s", "--origin", SHOP, "--role", "BackOffice"], "meridian apikey: --origin is for public keys: add --public"],
    [
      ["--public", "--client-id", "s", "--feature", "o", "--audience", " "],
      'meridian apikey: --audience " " is not an audience: 1 to 200 characters, none of them control characters',
    ],
  ])("D60 D56 apikey create %j is refused in one line naming the flag (exit 2), nothing created", (args, line) => {
    const before = meridian(["apikey", "list", "--json"], env()).stdout;
    const r = meridian(["apikey", "create", ...args], env());
    expect(r.status).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr.split("\n")[0]).toBe(line);
    expect(meridian(["apikey", "list", "--json"], env()).stdout).toBe(before);
  });
});

/** A grpc-js server-streaming call: "ok" once its first message arrives (then cancelled), or the status code it failed with. */
function grpcFirst(method: DescMethod, request: Record<string, unknown>, metadata: Record<string, string>): Promise<"ok" | grpc.status> {
  const md = new grpc.Metadata();
  for (const [k, v] of Object.entries(metadata)) md.set(k, v);
  const client = new grpc.Client(hostPort(server.url), grpc.credentials.createInsecure());
  return new Promise((resolve) => {
    const call = client.makeServerStreamRequest(
      `/${method.parent.typeName}/${method.name}`,
      (m: unknown) => Buffer.from(toBinary(method.input, m as never)),
      (b: Buffer) => b,
      create(method.input, request),
      md,
    );
    const done = (outcome: "ok" | grpc.status) => {
      resolve(outcome);
      call.cancel();
      client.close();
    };
    call.on("data", () => done("ok"));
    call.on("error", (e: grpc.ServiceError) => done(e.code));
    call.on("end", () => done(grpc.status.OK));
  });
}
