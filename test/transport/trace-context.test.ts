// D45 W3C Trace Context: the caller's trace id is logged with its request and
// returned in traceresponse; without one a new trace is made; browsers
// instrumented with OpenTelemetry pass the CORS preflight.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FeatureStatusService } from "../../src/gen/meridian/featurestatus/v1/feature_status_pb.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { grpcUnary, hostPort } from "../helpers/clients.js";

const ORIGIN = "https://app.example.com";
let server: TestServer;
let key: string;
beforeAll(async () => {
  server = await startTestServer({ MERIDIAN_CORS_ORIGINS: ORIGIN, MERIDIAN_CORS_HEADERS: "X-Request-Id, x-tenant" });
  key = await server.key({ roles: ["BackOffice"], scopes: ["platform_iam_featurestatus_read"] });
});
afterAll(() => server.close());

const TRACE = "0af7651916cd43dd8448eb211c80319c";
const PARENT = "b7ad6b7169203331";

async function logLineOf(path: string, since: number): Promise<Record<string, unknown>> {
  for (let i = 0; i < 100; i++) {
    const line = server.logs.slice(since).find((l) => l.msg === "request" && l.path === path);
    if (line) return line;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no request line for ${path}`);
}

describe("D45 trace context", () => {
  it("D45 a valid traceparent's trace id is in the request's log line and in traceresponse, with this server's span and the caller's flags", async () => {
    const before = server.logs.length;
    const r = await fetch(`${server.url}/api/admin/feature/message`, {
      headers: { "svc-open-api-key": key, traceparent: `00-${TRACE}-${PARENT}-01` },
    });
    expect(r.status).toBe(200);
    const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(r.headers.get("traceresponse") ?? "");
    expect(m?.[1]).toBe(TRACE);
    expect(m?.[2]).not.toBe(PARENT);
    expect(await logLineOf("/api/admin/feature/message", before)).toMatchObject({ traceId: TRACE, spanId: m![2] });
  });

  it.each([undefined, "00-00000000000000000000000000000000-b7ad6b7169203331-01", "garbage", `ff-${TRACE}-${PARENT}-01`])(
    "D45 without a valid traceparent (%s) a new trace is made, logged and returned",
    async (traceparent) => {
      const before = server.logs.length;
      const r = await fetch(`${server.url}/api/admin/feature/message`, {
        headers: { "svc-open-api-key": key, ...(traceparent ? { traceparent } : {}) },
      });
      const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-00$/.exec(r.headers.get("traceresponse") ?? "");
      expect(m).not.toBeNull();
      expect(m![1]).not.toBe(TRACE);
      expect(m![1]).not.toMatch(/^0+$/);
      expect(await logLineOf("/api/admin/feature/message", before)).toMatchObject({ traceId: m![1] });
    },
  );

  it("D45 a gRPC call's traceparent metadata is its trace too", async () => {
    const before = server.logs.length;
    const r = await grpcUnary(
      hostPort(server.url),
      FeatureStatusService.method.listGlobalMessages,
      {},
      { "svc-open-api-key": key, traceparent: `00-${TRACE}-${PARENT}-01` },
    );
    expect(r.error).toBeUndefined();
    expect(await logLineOf(`/${FeatureStatusService.typeName}/ListGlobalMessages`, before)).toMatchObject({ traceId: TRACE });
  });

  it("D36 D45 the CORS preflight allows traceparent, tracestate, baggage and MERIDIAN_CORS_HEADERS; traceresponse is exposed", async () => {
    const pre = await fetch(`${server.url}/api/admin/feature/message`, {
      method: "OPTIONS",
      headers: {
        origin: ORIGIN,
        "access-control-request-method": "GET",
        "access-control-request-headers": "traceparent,tracestate,baggage,x-request-id,x-tenant",
      },
    });
    expect(pre.status).toBe(204);
    const allowed = (pre.headers.get("access-control-allow-headers") ?? "").split(", ");
    expect(allowed).toEqual(
      expect.arrayContaining(["traceparent", "tracestate", "baggage", "x-request-id", "x-tenant", "svc-open-api-key"]),
    );
    const r = await fetch(`${server.url}/api/admin/feature/message`, { headers: { origin: ORIGIN, "svc-open-api-key": key } });
    expect((r.headers.get("access-control-expose-headers") ?? "").split(", ")).toContain("traceresponse");
    // A page reads where a 201's resource is (RFC 9110, 15.3.2) too.
    expect((r.headers.get("access-control-expose-headers") ?? "").split(", ")).toContain("location");
  });
});
