// D4, D5, D10: one port answers gRPC (grpc-js over h2c), Connect (HTTP/2 and
// HTTP/1.1), gRPC-Web and REST, and every protocol reaches the same handler
// through the same authentication.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as grpc from "@grpc/grpc-js";
import { Code, ConnectError } from "@connectrpc/connect";
import { Health, HealthCheckResponse_ServingStatus } from "../../src/gen/grpc/health/v1/health_pb.js";
import { FeatureStatusService } from "../../src/gen/meridian/featurestatus/v1/feature_status_pb.js";
import { TimeSeriesService, type ValuesChunk } from "../../src/gen/meridian/timeseries/v1/time_series_pb.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { connectClient, grpcStream, grpcUnary, grpcWebClient, hostPort } from "../helpers/clients.js";
import { TS_RW, iso, makeRows, tsApi, tsHeaders } from "../helpers/timeseries.js";

let server: TestServer;
let key: string;
const READ = { scopes: ["platform_iam_featurestatus_readwrite"], roles: ["BackOffice"], clientId: "interop" };

beforeAll(async () => {
  server = await startTestServer();
  key = await server.key(READ);
});
afterAll(() => server.close());

async function connectCode(p: Promise<unknown>): Promise<Code | "ok"> {
  try {
    await p;
    return "ok";
  } catch (e) {
    return ConnectError.from(e).code;
  }
}

describe("D4 one port, every protocol", () => {
  it("D32 grpc-js health check answers SERVING without credentials", async () => {
    const r = await grpcUnary(hostPort(server.url), Health.method.check, {});
    expect(r.error).toBeUndefined();
    expect(r.response?.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
  });

  it("D32 grpc-js health check of an unknown service is NOT_FOUND", async () => {
    const r = await grpcUnary(hostPort(server.url), Health.method.check, { service: "no.such.Service" });
    expect(r.error?.code).toBe(grpc.status.NOT_FOUND);
  });

  it("D10 without credentials every protocol says unauthenticated", async () => {
    const g = await grpcUnary(hostPort(server.url), FeatureStatusService.method.listGlobalMessages, {});
    expect(g.error?.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(await connectCode(connectClient(FeatureStatusService, server.url, "2").listGlobalMessages({}))).toBe(Code.Unauthenticated);
    expect(await connectCode(connectClient(FeatureStatusService, server.url, "1.1").listGlobalMessages({}))).toBe(Code.Unauthenticated);
    expect(await connectCode(grpcWebClient(FeatureStatusService, server.url).listGlobalMessages({}))).toBe(Code.Unauthenticated);
    const r = await fetch(`${server.url}/api/admin/feature/message`);
    expect(r.status).toBe(401);
    expect(r.headers.get("www-authenticate")).toMatch(/Bearer/);
  });

  it("D10 a bad key is refused alike by every protocol", async () => {
    const headers = { "svc-open-api-key": "mrd_aaaaaaaaaaaa_" + "x".repeat(43) };
    const g = await grpcUnary(hostPort(server.url), FeatureStatusService.method.listGlobalMessages, {}, headers);
    expect(g.error?.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(await connectCode(connectClient(FeatureStatusService, server.url).listGlobalMessages({}, { headers }))).toBe(
      Code.Unauthenticated,
    );
    expect((await fetch(`${server.url}/api/admin/feature/message`, { headers })).status).toBe(401);
  });

  it("D5 with a valid key, gRPC, Connect, gRPC-Web and REST reach the same handler and see the same data", async () => {
    const headers = { "svc-open-api-key": key };
    const created = await fetch(`${server.url}/api/admin/feature/message`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ type: "Critical", title: "Outage", startDate: "2020-01-01T00:00:00Z", expiringDate: "2099-01-01T00:00:00Z" }),
    });
    expect(created.status).toBe(201);
    const id = ((await created.json()) as { id: number }).id;

    const g = await grpcUnary(hostPort(server.url), FeatureStatusService.method.listGlobalMessages, {}, headers);
    const c2 = await connectClient(FeatureStatusService, server.url, "2").listGlobalMessages({}, { headers });
    const c1 = await connectClient(FeatureStatusService, server.url, "1.1").listGlobalMessages({}, { headers });
    const web = await grpcWebClient(FeatureStatusService, server.url).listGlobalMessages({}, { headers });
    const rest = (await (await fetch(`${server.url}/api/admin/feature/message`, { headers })).json()) as {
      data: { id: number; featureId: unknown }[];
      cursor: unknown;
    };

    expect(g.error).toBeUndefined();
    for (const data of [g.response!.data, c2.data, c1.data, web.data]) {
      expect(data.map((m) => [m.id, m.title, m.type, m.startDate, m.featureId])).toEqual([
        [id, "Outage", "Critical", "2020-01-01T00:00:00Z", undefined],
      ]);
    }
    // REST shows the unset optional fields as null (the spec's JSON).
    expect(rest.data.map((m) => [m.id, m.featureId])).toEqual([[id, null]]);
    expect(rest.cursor).toBeNull();
  });

  it("D5 a streamed read (ReadValues) answers the same rows on gRPC, Connect, gRPC-Web and REST, past the same authentication", async () => {
    const tsKey = await server.key(TS_RW);
    const api = tsApi(server, tsKey);
    const datasetId = await api.dataset();
    const timeSeriesId = await api.series(datasetId);
    const rows = makeRows(20_000); // two blocks, so two chunks
    await api.upload(datasetId, timeSeriesId, rows);
    const headers = tsHeaders(tsKey, datasetId);
    const req = { datasetId, timeSeriesId };
    const asRows = (chunks: ValuesChunk[]) =>
      chunks.flatMap((c) => c.timestamps.map((t, i) => [iso(Number(t)), c.columns[0].singles[i], c.columns[1].flags[i]]));
    const g = await grpcStream(hostPort(server.url), TimeSeriesService.method.readValues, req, headers);
    expect(g.error).toBeUndefined();
    expect(g.messages.length).toBe(2);
    const collect = async (stream: AsyncIterable<ValuesChunk>) => {
      const out: ValuesChunk[] = [];
      for await (const c of stream) out.push(c);
      return out;
    };
    const connect = await collect(connectClient(TimeSeriesService, server.url).readValues(req, { headers }));
    const web = await collect(grpcWebClient(TimeSeriesService, server.url).readValues(req, { headers }));
    const rest = await (await fetch(`${server.url}/api/ts/dataset/${datasetId}/timeseries/${timeSeriesId}/values`, { headers })).json();
    const expected = rows.map(([t, v, f]) => [t, Math.fround(v), f]);
    for (const chunks of [g.messages, connect, web]) expect(asRows(chunks)).toEqual(expected);
    expect(rest.data).toEqual(rows);
    // Without a key, every protocol is refused the same way.
    const anon = await grpcStream(hostPort(server.url), TimeSeriesService.method.readValues, req, {});
    expect(anon.error?.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(await connectCode(collect(connectClient(TimeSeriesService, server.url).readValues(req)))).toBe(Code.Unauthenticated);
  });
});
