// D43 Prometheus metrics, scraped after real traffic and read with a
// Prometheus text-format parser (not a regular expression).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { draft } from "../helpers/messages.js";
import { grpcUnary, hostPort } from "../helpers/clients.js";
import { TS_RW, makeRows, tsApi } from "../helpers/timeseries.js";
import { exited, serve } from "../helpers/cli.js";
import { FeatureStatusService } from "../../src/gen/meridian/featurestatus/v1/feature_status_pb.js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { envelope } from "../helpers/envelopes.js";

/** promtool, from Debian's prometheus package (.ci/run installs it). */
const PROMTOOL = ["/usr/bin/promtool", "/usr/local/bin/promtool"].find((p) => spawnSync(p, ["--version"]).status === 0);

interface Family {
  name: string;
  type: string;
  metrics: { value?: string; labels?: Record<string, string>; buckets?: Record<string, string>; count?: string }[];
}

async function scrape(url: string): Promise<Map<string, Family>> {
  const r = await fetch(url);
  expect(r.status).toBe(200);
  expect(r.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return new Map((parsePrometheusTextFormat(await r.text()) as Family[]).map((f) => [f.name, f]));
}

const sample = (families: Map<string, Family>, name: string, labels: Record<string, string>) =>
  families.get(name)?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));

describe("D43 metrics", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ MERIDIAN_METRICS: "public" });
  });
  afterAll(() => server.close());

  it("D43 requests by method, protocol and code, latency histograms, rows and bytes streamed, cache events and the block cache's bytes, and Node's own metrics", async () => {
    const key = await server.key({ roles: ["BackOffice"], scopes: ["platform_iam_featurestatus_readwrite"] });
    const h = { "svc-open-api-key": key, "content-type": "application/json" };
    expect(
      (await fetch(`${server.url}/api/admin/feature/message`, { method: "POST", headers: h, body: JSON.stringify(draft()) })).status,
    ).toBe(201);
    for (let i = 0; i < 3; i++) expect((await fetch(`${server.url}/api/admin/feature/message`, { headers: h })).status).toBe(200);
    expect((await fetch(`${server.url}/api/admin/feature/message/999999`, { method: "DELETE", headers: h })).status).toBe(404);
    expect(
      (await grpcUnary(hostPort(server.url), FeatureStatusService.method.listGlobalMessages, {}, { "svc-open-api-key": key })).error,
    ).toBeUndefined();
    const ts = tsApi(server, await server.key(TS_RW));
    const d = await ts.dataset();
    const s = await ts.series(d);
    await ts.upload(d, s, makeRows(20_000));
    expect((await ts.read(d, s)).json.data.length).toBe(20_000);
    await new Promise((r) => setTimeout(r, 50));

    const m = await scrape(`${server.url}/metrics`);
    expect(
      sample(m, "meridian_requests_total", { method: "FeatureStatusService/ListGlobalMessages", protocol: "rest", code: "ok" })?.value,
    ).toBe("3");
    expect(
      sample(m, "meridian_requests_total", { method: "FeatureStatusService/CreateGlobalMessage", protocol: "rest", code: "ok" })?.value,
    ).toBe("1");
    expect(
      sample(m, "meridian_requests_total", { method: "FeatureStatusService/DeleteGlobalMessage", protocol: "rest", code: "not_found" })
        ?.value,
    ).toBe("1");
    expect(
      sample(m, "meridian_requests_total", { method: "FeatureStatusService/ListGlobalMessages", protocol: "grpc", code: "ok" })?.value,
    ).toBe("1");
    expect(m.get("meridian_request_duration_seconds")?.type).toBe("HISTOGRAM");
    // (This parser folds a histogram's labelled series into one; its buckets still show the requests timed.)
    expect(Number(m.get("meridian_request_duration_seconds")?.metrics[0].buckets?.["+Inf"])).toBeGreaterThanOrEqual(1);
    expect(Number(m.get("meridian_value_rows_streamed_total")?.metrics[0].value)).toBe(20_000);
    expect(Number(m.get("meridian_value_bytes_streamed_total")?.metrics[0].value)).toBeGreaterThan(20_000 * 20);
    expect(Number(sample(m, "meridian_listing_cache_events_total", { event: "hit" })?.value)).toBeGreaterThanOrEqual(2);
    expect(sample(m, "meridian_listing_cache_events_total", { event: "miss" })).toBeDefined();
    expect(m.get("meridian_db_lock_waits_total")?.type).toBe("COUNTER");
    expect(m.get("meridian_requests_in_flight")?.type).toBe("GAUGE");
    for (const node of [
      "meridian_process_cpu_seconds_total",
      "meridian_nodejs_eventloop_lag_seconds",
      "meridian_nodejs_gc_duration_seconds",
      "meridian_process_resident_memory_bytes",
    ]) {
      expect(m.has(node), node).toBe(true);
    }
    // A path no route knows is counted under one label, never its own.
    await fetch(`${server.url}/random/${Math.random()}`);
    for (let i = 0; i < 2; i++)
      expect((await ts.call("GET", `/api/ts/dataset/${d}/timeseries/${s}/values/chart?width=50`)).status).toBe(200);
    const after = await scrape(`${server.url}/metrics`);
    expect(JSON.stringify([...after.values()])).not.toContain("/random/");
    // The second chart came from the block cache, which counts what it holds.
    expect(Number(sample(after, "meridian_block_cache_events_total", { event: "hit" })?.value)).toBeGreaterThanOrEqual(1);
    expect(sample(after, "meridian_block_cache_events_total", { event: "miss" })).toBeDefined();
    expect(Number(after.get("meridian_block_cache_bytes")?.metrics[0].value)).toBeGreaterThan(0);
  });

  it("D59 every outcome on every protocol is labelled by its gRPC code name, the HTTP status apart", async () => {
    const key = await server.key({ roles: ["BackOffice"], scopes: ["platform_iam_featurestatus_readwrite"] });
    const LIST = "FeatureStatusService/ListGlobalMessages";
    const CREATE = "FeatureStatusService/CreateGlobalMessage";
    const before = await scrape(`${server.url}/metrics`);
    const count = (m: Map<string, Family>, labels: Record<string, string>) =>
      Number(sample(m, "meridian_requests_total", labels)?.value ?? 0);
    // Refused before any handler: gRPC without a key, a Connect body that is not its JSON, REST without a key,
    // a REST body that is not JSON, and answers no RPC gives: a route nobody has, liveness.
    expect((await grpcUnary(hostPort(server.url), FeatureStatusService.method.listGlobalMessages, {}, {})).error?.code).toBe(16);
    const connect = await fetch(`${server.url}/meridian.featurestatus.v1.FeatureStatusService/CreateGlobalMessage`, {
      method: "POST",
      headers: { "svc-open-api-key": key, "content-type": "application/json" },
      body: "{",
    });
    expect(connect.status).toBe(400);
    const web = await fetch(`${server.url}/meridian.featurestatus.v1.FeatureStatusService/ListGlobalMessages`, {
      method: "POST",
      headers: { "content-type": "application/grpc-web+proto" },
      body: new Uint8Array(envelope(new Uint8Array(0))),
    });
    expect(web.status).toBe(200);
    await web.arrayBuffer();
    expect((await fetch(`${server.url}/api/admin/feature/message`)).status).toBe(401);
    const bad = await fetch(`${server.url}/api/admin/feature/message`, {
      method: "POST",
      headers: { "svc-open-api-key": key, "content-type": "application/json" },
      body: "{",
    });
    expect(bad.status).toBe(400);
    expect((await fetch(`${server.url}/no/such/route`)).status).toBe(404);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 50));
    const m = await scrape(`${server.url}/metrics`);
    const grew = (labels: Record<string, string>) => count(m, labels) - count(before, labels);
    expect(grew({ method: LIST, protocol: "grpc", code: "unauthenticated", status: "200" })).toBe(1);
    expect(grew({ method: CREATE, protocol: "connect", code: "invalid_argument", status: "400" })).toBe(1);
    expect(grew({ method: LIST, protocol: "grpc-web", code: "unauthenticated", status: "200" })).toBe(1);
    expect(grew({ method: LIST, protocol: "rest", code: "unauthenticated", status: "401" })).toBe(1);
    expect(grew({ method: CREATE, protocol: "rest", code: "invalid_argument", status: "400" })).toBe(1);
    expect(grew({ method: "unknown", protocol: "rest", code: "not_found", status: "404" })).toBe(1);
    expect(grew({ method: "none", protocol: "http", code: "ok", status: "200" })).toBeGreaterThanOrEqual(1);
    const codes = new Set(m.get("meridian_requests_total")!.metrics.map((x) => x.labels!.code));
    for (const c of codes)
      expect(c, "a gRPC code name").toMatch(
        /^(ok|canceled|unknown|invalid_argument|deadline_exceeded|not_found|already_exists|permission_denied|resource_exhausted|failed_precondition|aborted|out_of_range|unimplemented|internal|unavailable|data_loss|unauthenticated)$/,
      );
  });

  it.skipIf(!PROMTOOL)("D59 promtool check metrics passes on a scrape after traffic", async () => {
    const key = await server.key({ roles: ["BackOffice"], scopes: ["platform_iam_featurestatus_readwrite"] });
    await fetch(`${server.url}/api/admin/feature/message`, { headers: { "svc-open-api-key": key } });
    const text = await (await fetch(`${server.url}/metrics`)).text();
    const r = spawnSync(PROMTOOL!, ["check", "metrics"], { input: text, encoding: "utf8" });
    expect(r.stdout + r.stderr).toBe("");
    expect(r.status).toBe(0);
  });

  it("D43 MERIDIAN_METRICS=off: no /metrics", async () => {
    const off = await startTestServer({ MERIDIAN_METRICS: "off" });
    try {
      expect((await fetch(`${off.url}/metrics`)).status).toBe(404);
    } finally {
      await off.close();
    }
  });

  it("D43 by default /metrics is on a port of its own on 127.0.0.1, and not on the API's port", async () => {
    const dir = mkdtempSync(join(tmpdir(), "meridian-metrics-"));
    const { child, url, stderr } = await serve({ MERIDIAN_DB: join(dir, "m.db") });
    try {
      const line = stderr()
        .split("\n")
        .find((l) => l.includes('"metrics"'));
      const metricsUrl = (JSON.parse(line!) as { metrics: string }).metrics;
      expect(metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      expect((await scrape(metricsUrl)).has("meridian_requests_total")).toBe(true);
      expect((await fetch(`${url}/metrics`)).status).toBe(404);
    } finally {
      child.kill("SIGTERM");
      await exited(child);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
