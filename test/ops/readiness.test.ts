// D57 readiness: /readyz and the gRPC health service say whether to send
// traffic here (serving, and the database answers a trivial query within
// 1 s); /healthz stays liveness; probes are logged at debug. A database
// that stops answering is in test/scale/replicas.test.ts (PostgreSQL).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Health, HealthCheckResponse_ServingStatus as Status } from "../../src/gen/grpc/health/v1/health_pb.js";
import { FeatureStatusService } from "../../src/gen/meridian/featurestatus/v1/feature_status_pb.js";
import { connectClient, grpcUnary, hostPort } from "../helpers/clients.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { inServingState } from "../helpers/serving-state.js";

describe("D57 readiness", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ MERIDIAN_LOG_LEVEL: "debug" });
  });
  afterAll(() => server?.close());

  it("D57 /readyz answers 200 {status: ready} while serving and the database answers; the gRPC health service says SERVING for the server and for each service", async () => {
    const r = await fetch(`${server.url}/readyz`);
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ status: "ready" });
    expect((await fetch(`${server.url}/readyz`, { method: "HEAD" })).status).toBe(200);
    for (const service of ["", FeatureStatusService.typeName]) {
      const g = await grpcUnary(hostPort(server.url), Health.method.check, { service });
      expect(g.error).toBeUndefined();
      expect(g.response?.status).toBe(Status.SERVING);
    }
  });

  it("D57 an open health Watch does not hold the drain: it reads NOT_SERVING and ends, and the server stops at once", async () => {
    const own = await startTestServer();
    const client = connectClient(Health, own.url);
    const seen: Status[] = [];
    const watching = (async () => {
      for await (const r of client.watch({ service: "" })) seen.push(r.status);
    })();
    await expect.poll(() => seen).toEqual([Status.SERVING]);
    const t0 = performance.now();
    await own.close(); // the drain's grace is 1 s here: well under it, not at it
    expect(performance.now() - t0).toBeLessThan(900);
    await watching.catch(() => {});
    expect(seen).toEqual([Status.SERVING, Status.NOT_SERVING]);
  });

  it("D57 /healthz and /readyz requests are logged at debug, other requests at info", async () => {
    for (const path of ["/healthz", "/readyz", "/openapi.json"]) expect((await fetch(server.url + path)).status).toBe(200);
    const levelOf = (path: string) => server.logs.find((l) => l.msg === "request" && l.path === path)?.level;
    await expect.poll(() => levelOf("/openapi.json")).toBe(30);
    expect([levelOf("/healthz"), levelOf("/readyz")]).toEqual([20, 20]);
  });

  it.each([
    ["starting", "not ready: the server is starting"],
    ["draining", "not ready: the server is draining: it is shutting down"],
  ] as const)(
    "D57 while %s /readyz answers 503 problem+json with the reason and the health service says NOT_SERVING",
    async (state, detail) => {
      await inServingState(state, [FeatureStatusService.typeName], async (url) => {
        const r = await fetch(`${url}/readyz`);
        expect(r.status).toBe(503);
        expect(r.headers.get("content-type")).toMatch(/^application\/problem\+json/);
        expect(r.headers.get("retry-after")).toBe("1");
        expect(await r.json()).toMatchObject({ status: 503, detail, reason: "NOT_READY" });
        expect((await connectClient(Health, url, "1.1").check({})).status).toBe(Status.NOT_SERVING);
      });
    },
  );
});
