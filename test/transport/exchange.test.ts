// Issue 40 item 2: one exchange per request. Each request is one object from
// dispatch to the response's close, and that close writes its one log line
// (D34) and its one count (D43): whatever the protocol, whether the call was
// refused, named nothing, or lost its client halfway.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import http2 from "node:http2";
import { randomBytes } from "node:crypto";
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { FeatureStatusService } from "../../src/gen/meridian/featurestatus/v1/feature_status_pb.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { grpcUnary, hostPort } from "../helpers/clients.js";
import { TS_RW, makeRows, tsApi, tsHeaders } from "../helpers/timeseries.js";

interface Family {
  name: string;
  metrics: { value?: string; labels?: Record<string, string> }[];
}

let server: TestServer;
let key: string;
let tsKey: string;
let valuesPath: string;
let dataset: string;
beforeAll(async () => {
  server = await startTestServer({ MERIDIAN_METRICS: "public" });
  key = await server.key({ roles: ["BackOffice"], scopes: ["platform_iam_featurestatus_read"] });
  tsKey = await server.key(TS_RW);
  const api = tsApi(server, tsKey);
  const d = await api.dataset();
  const s = await api.series(d);
  await api.upload(d, s, makeRows(300_000));
  dataset = d;
  valuesPath = `/api/ts/dataset/${d}/timeseries/${s}/values`;
});
afterAll(() => server.close());

/** A fresh W3C traceparent, and its trace id: the mark of one request in the log. */
function trace(): { traceparent: string; traceId: string } {
  const traceId = randomBytes(16).toString("hex");
  return { traceparent: `00-${traceId}-${randomBytes(8).toString("hex")}-01`, traceId };
}

/** meridian_requests_total and meridian_requests_in_flight, as series: labels and value. */
async function scrape(): Promise<{ requests: Family["metrics"]; inFlight: Family["metrics"] }> {
  const r = await fetch(`${server.url}/metrics`);
  expect(r.status).toBe(200);
  const families = new Map((parsePrometheusTextFormat(await r.text()) as Family[]).map((f) => [f.name, f]));
  return {
    requests: families.get("meridian_requests_total")?.metrics ?? [],
    inFlight: families.get("meridian_requests_in_flight")?.metrics ?? [],
  };
}

/** The requests counted with these labels (every other label summed over). */
const counted = (series: Family["metrics"], labels: Record<string, string>) =>
  series.filter((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v)).reduce((sum, m) => sum + Number(m.value ?? 0), 0);

const linesOf = (traceId: string) => server.logs.filter((l) => l.msg === "request" && l.traceId === traceId);

async function loggedOnce(traceId: string): Promise<Record<string, unknown>> {
  for (let i = 0; i < 500 && linesOf(traceId).length === 0; i++) await new Promise((r) => setTimeout(r, 10));
  return linesOf(traceId)[0];
}

describe("issue 40 one exchange per request", () => {
  it("issue 40 one exchange settles each request once: one log line and one metric count per request, for REST, Connect, gRPC, a refused credential, an unknown path and a client gone mid-stream", async () => {
    const before = await scrape();
    const listed = "FeatureStatusService/ListGlobalMessages";
    const requests: { name: string; traceId: string; labels: Record<string, string>; line: Record<string, unknown> }[] = [];

    const rest = trace();
    const r1 = await fetch(`${server.url}/api/admin/feature/message`, {
      headers: { "svc-open-api-key": key, traceparent: rest.traceparent },
    });
    expect(r1.status).toBe(200);
    await r1.arrayBuffer();
    requests.push({ name: "REST", traceId: rest.traceId, labels: { method: listed, protocol: "rest", code: "ok" }, line: { status: 200 } });

    const connect = trace();
    const r2 = await fetch(`${server.url}/${FeatureStatusService.typeName}/ListGlobalMessages`, {
      method: "POST",
      headers: { "svc-open-api-key": key, "content-type": "application/json", traceparent: connect.traceparent },
      body: "{}",
    });
    expect(r2.status).toBe(200);
    await r2.arrayBuffer();
    requests.push({
      name: "Connect",
      traceId: connect.traceId,
      labels: { method: listed, protocol: "connect", code: "ok" },
      line: { status: 200 },
    });

    const grpc = trace();
    const g = await grpcUnary(
      hostPort(server.url),
      FeatureStatusService.method.listGlobalMessages,
      {},
      { "svc-open-api-key": key, traceparent: grpc.traceparent },
    );
    expect(g.error).toBeUndefined();
    requests.push({ name: "gRPC", traceId: grpc.traceId, labels: { method: listed, protocol: "grpc", code: "ok" }, line: { status: 200 } });

    const refused = trace();
    const r3 = await fetch(`${server.url}/api/admin/feature/message`, {
      headers: { "svc-open-api-key": "no-such-key", traceparent: refused.traceparent },
    });
    expect(r3.status).toBe(401);
    await r3.arrayBuffer();
    requests.push({
      name: "a refused credential",
      traceId: refused.traceId,
      labels: { method: listed, protocol: "rest", code: "unauthenticated", status: "401" },
      line: { status: 401 },
    });

    const unknown = trace();
    const r4 = await fetch(`${server.url}/no/such/path`, { headers: { traceparent: unknown.traceparent } });
    expect(r4.status).toBe(404);
    await r4.arrayBuffer();
    requests.push({
      name: "an unknown path",
      traceId: unknown.traceId,
      labels: { method: "unknown", protocol: "rest", code: "not_found", status: "404" },
      line: { status: 404 },
    });

    // A REST read of 300,000 rows over HTTP/2, reset after its first bytes.
    const gone = trace();
    const session = http2.connect(server.url);
    const stream = session.request({ ":path": valuesPath, ...tsHeaders(tsKey, dataset), traceparent: gone.traceparent });
    await new Promise<void>((resolve) => stream.once("data", () => resolve()));
    stream.close(http2.constants.NGHTTP2_CANCEL);
    session.close();
    requests.push({
      name: "a client gone mid-stream",
      traceId: gone.traceId,
      labels: { method: "TimeSeriesService/ReadValuesJson", protocol: "rest" },
      line: { status: 200, completed: false, cancelled: true },
    });

    for (const r of requests) expect(await loggedOnce(r.traceId), r.name).toMatchObject({ path: expect.any(String), ...r.line });
    await new Promise((r) => setTimeout(r, 200)); // a second line or count would have come by now

    const after = await scrape();
    for (const r of requests) {
      expect(linesOf(r.traceId).length, `${r.name}: log lines`).toBe(1);
      expect(counted(after.requests, r.labels) - counted(before.requests, r.labels), `${r.name}: counted`).toBe(1);
    }
    // Every request between the two scrapes counted once, the first scrape included (its count comes at its close).
    expect(counted(after.requests, {}) - counted(before.requests, {})).toBe(requests.length + 1);
    // And each call counted in flight was counted out.
    for (const m of after.inFlight) expect(Number(m.value), `in flight: ${m.labels?.protocol}`).toBe(0);
  });
});
