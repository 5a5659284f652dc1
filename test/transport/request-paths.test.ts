// D8, D5: a request path that a proxy or a WHATWG URL parser would read as
// another path (a dot segment, a backslash, an encoded slash, an empty
// segment) is a 400 MALFORMED_REQUEST on every route, before any route is
// chosen; a proxy that allows or blocks by prefix then sees the path the
// server serves (issue 39 item 3). fetch and undici normalise dot segments,
// so the requests go out as written: http.request and http2 with raw paths.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import http from "node:http";
import http2 from "node:http2";
import { startTestServer, type TestServer } from "../helpers/server.js";

let server: TestServer;
let key: string;
beforeAll(async () => {
  server = await startTestServer();
  key = await server.key({ roles: ["BackOffice"], scopes: ["platform_iam_featurestatus_readwrite"] });
});
afterAll(() => server.close());

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One HTTP/1.1 request with its target exactly as given, on a connection of its own. */
function get1(target: string, headers: Record<string, string> = {}, method = "GET", body?: string): Promise<Answer> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: hostname,
      port,
      method,
      path: target,
      headers: { "svc-open-api-key": key, ...headers },
      agent: false,
    });
    req.once("error", reject);
    req.once("response", (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (text += d));
      res.once("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.end(body);
  });
}

/** One HTTP/2 request with `:path` exactly as given. */
function get2(path: string, headers: Record<string, string> = {}): Promise<Answer & { trailers: http2.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(server.url);
    session.once("error", reject);
    const stream = session.request({ ":method": "GET", ":path": path, "svc-open-api-key": key, ...headers }, { endStream: true });
    let text = "";
    let head: http2.IncomingHttpHeaders = {};
    let trailers: http2.IncomingHttpHeaders = {};
    stream.setEncoding("utf8");
    stream.once("response", (h) => (head = h));
    stream.once("trailers", (t) => (trailers = t));
    stream.on("data", (d: string) => (text += d));
    stream.once("error", reject);
    stream.once("end", () => {
      session.close();
      resolve({ status: Number(head[":status"]), headers: head, body: text, trailers });
    });
  });
}

function expectRefused(a: Answer): void {
  expect(a.status, a.body).toBe(400);
  expect(a.headers["content-type"]).toBe("application/problem+json; charset=utf-8");
  expect(JSON.parse(a.body)).toMatchObject({
    status: 400,
    code: "invalid_argument",
    reason: "MALFORMED_REQUEST",
    detail: expect.any(String),
  });
}

const LISTING = "/api/admin/feature/message";

describe("D8 a path a proxy reads differently is a 400 problem+json (issue 39 item 3)", () => {
  it.each([
    // Backslashes: a WHATWG parser reads them as slashes.
    ["a backslash", "/api\\admin\\feature\\message"],
    ["an encoded backslash", "/api%5Cadmin%5cfeature/message"],
    // Dot segments, plain or percent-encoded in any case, anywhere in the path.
    ["a .. segment", `/x/..${LISTING}`],
    ["a . segment", `/.${LISTING}`],
    ["an encoded .. segment", "/api/admin/feature/%2e%2e/feature/message"],
    ["an encoded .. segment in capitals", "/api/admin/feature/%2E%2E/feature/message"],
    ["a half-encoded .. segment", "/api/admin/feature/.%2e/feature/message"],
    ["a half-encoded .. segment, the other half", "/api/admin/feature/%2E./feature/message"],
    ["an encoded . segment", "/api/admin/feature/%2e/message"],
    ["a trailing .. segment", `${LISTING}/x/..`],
    ["a trailing . segment", "/healthz/."],
    ["a dot segment before a static file", "/ui/x/../console.js"],
    ["a dot segment before /metrics", "/x/../metrics"],
    ["a dot segment before an RPC path", "/x/../meridian.featurestatus.v1.FeatureStatusService/ListGlobalMessages"],
    // Empty segments: proxies merge slashes (nginx by default); a leading // is a WHATWG host.
    ["a leading //", `/${LISTING}`],
    ["an empty segment", "/api//admin/feature/message"],
    ["empty segments at the end", "/docs//"],
    // An encoded slash: a proxy that decodes it reads more segments than the route did.
    ["an encoded slash", "/api/admin/feature/a%2Fb/message"],
    ["an encoded slash in lower case", "/api/admin/feature/a%2fb/message"],
    // The absolute form (D5) is checked as the path it carries.
    ["a dot segment in the absolute form", "http://localhost/x/../healthz"],
    ["an encoded dot segment in the absolute form", "http://localhost/api/admin/feature/%2e%2e/feature/message"],
    ["a backslash in the absolute form's authority", "http://localhost\\..\\x/healthz"],
    // Neither a path nor an absolute URL: a WHATWG reader resolves it against "/".
    ["a relative target", "../healthz"],
    ["a fragment, which no request carries", `/x/..#${LISTING}`],
  ])("D8 %s in a request path is a 400 problem+json: %s", async (_what, target) => {
    expectRefused(await get1(target));
  });

  it("D8 a refused path over HTTP/1.1 closes the connection, as node:http's own refusals do", async () => {
    expect((await get1(`/x/..${LISTING}`, { connection: "keep-alive" })).headers.connection).toBe("close");
  });

  it("D8 a dot segment over HTTP/2 is the same 400 problem+json", async () => {
    expectRefused(await get2(`/x/..${LISTING}`));
    expectRefused(await get2("/api/admin/feature/%2e%2e/feature/message"));
  });

  it("D8 a dot segment in a gRPC call's path is INVALID_ARGUMENT in gRPC's own form", async () => {
    const a = await get2("/x/../meridian.featurestatus.v1.FeatureStatusService/ListGlobalMessages", {
      "content-type": "application/grpc",
      te: "trailers",
    });
    expect(a.status).toBe(200);
    expect(a.headers["grpc-status"] ?? a.trailers["grpc-status"]).toBe("3");
  });

  it("D8 a dot segment in a Connect call's path is refused before the router reads it", async () => {
    expectRefused(
      await get1(
        "/meridian.featurestatus.v1.FeatureStatusService/../FeatureStatusService/ListGlobalMessages",
        { "content-type": "application/json" },
        "POST",
        "{}",
      ),
    );
  });

  it.each([
    ["the listing", LISTING, 200],
    ["a dot inside a segment (a feature id)", "/api/admin/feature/my.feature/message", 200],
    ["three dots, a feature id and no dot segment", "/api/admin/feature/.../message", 200],
    ["encoded dots that are no dot segment", "/api/admin/feature/%2e%2e%2e/message", 200],
    ["a file name with a dot", "/ui/console.js", 200],
    ["a feed", "/api/admin/feature/message/feed.atom", 200],
    ["dots and backslashes in the query", `${LISTING}?x=../..&y=%2e%2e/a\\b&z=%2F%5C`, 200],
    ["a trailing slash", "/docs/", 200],
    ["the root", "/", 200],
    ["/healthz", "/healthz", 200],
    ["the absolute form", "http://localhost/healthz", 200],
    ["a path no route has", "/api/nothing/here", 404],
  ])("D8 %s is served as it was before: %s", async (_what, target, status) => {
    const a = await get1(target);
    expect(a.status, a.body).toBe(status);
  });
});
