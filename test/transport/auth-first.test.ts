// D51, D6: credentials are checked before a body is read or inflated, on
// every protocol; an inflated body counts against the same limit as a plain one.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gzipSync } from "node:zlib";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { rawUpload, type RawAnswer } from "../helpers/clients.js";
import { TS_RW, tsApi, tsHeaders } from "../helpers/timeseries.js";

const MiB = 1024 * 1024;
const RSS_BOUND = 10 * MiB; // the bound for an anonymous request of any size

let server: TestServer;
let valuesPath: string;
let writer: string;

beforeAll(async () => {
  server = await startTestServer();
  writer = await server.key({
    clientId: "writer",
    ...TS_RW,
    scopes: ["platform_timeseries_readwrite", "platform_iam_featurestatus_readwrite"],
    roles: ["BackOffice"],
  });
  const api = tsApi(server, writer);
  const ds = await api.dataset();
  const series = await api.series(ds);
  valuesPath = `/api/ts/dataset/${ds}/timeseries/${series}/values`;
});
afterAll(() => server.close());

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/** The request's answer and how far the server's RSS rose above where it was while it ran (server and client share this process; the client holds one 64 KiB chunk). */
async function measured(send: () => Promise<RawAnswer>): Promise<{ answer: RawAnswer; rssGrowth: number }> {
  await new Promise((r) => setTimeout(r, 100)); // earlier requests' sockets wind down
  gc();
  const before = process.memoryUsage().rss;
  let peak = before;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 2);
  try {
    const answer = await send();
    await new Promise((r) => setTimeout(r, 50));
    peak = Math.max(peak, process.memoryUsage().rss);
    return { answer, rssGrowth: peak - before };
  } finally {
    clearInterval(timer);
  }
}

const rowsPrefix = Buffer.from('{"data":[');
const ANON_TS = { "svc-service-id": "timeseries", "svc-project-id": "proj-a", "content-type": "application/json" };

describe("D51 no work before authentication", () => {
  for (const httpVersion of ["1.1", "2"] as const) {
    it(`D51 an anonymous 64 MiB POST to a values path is answered 401 before its body is read, RSS +<10 MB (HTTP/${httpVersion})`, async () => {
      const { answer, rssGrowth } = await measured(() =>
        rawUpload(server.url, { httpVersion, path: valuesPath, headers: ANON_TS, total: 64 * MiB, prefix: rowsPrefix }),
      );
      console.log(
        `anonymous 64 MiB REST upload over HTTP/${httpVersion}: ${answer.status}, ${(answer.sentAtAnswer / MiB).toFixed(1)} MiB sent at the answer, server RSS +${(rssGrowth / MiB).toFixed(1)} MB`,
      );
      expect(answer.status).toBe(401);
      expect(answer.headers["content-type"]).toMatch(/^application\/problem\+json/);
      expect(answer.headers["www-authenticate"]).toMatch(/Bearer/);
      expect(JSON.parse(answer.body)).toMatchObject({ status: 401, code: "unauthenticated" });
      // Answered while the client was still sending: the server did not wait for the body.
      expect(answer.sentAtAnswer).toBeLessThan(32 * MiB);
      expect(rssGrowth).toBeLessThan(RSS_BOUND);
    });
  }

  it("D51 /healthz answers while an anonymous 64 MiB upload is refused", async () => {
    const upload = rawUpload(server.url, { httpVersion: "1.1", path: valuesPath, headers: ANON_TS, total: 64 * MiB, prefix: rowsPrefix });
    const health = await fetch(server.url + "/healthz");
    expect(health.status).toBe(200);
    expect((await upload).status).toBe(401);
  });

  it("D51 a bad key on a 64 MiB upload is refused like no key, before the body", async () => {
    const headers = { ...ANON_TS, "svc-open-api-key": "mrd_aaaaaaaaaaaa_" + "x".repeat(43) };
    const answer = await rawUpload(server.url, { httpVersion: "1.1", path: valuesPath, headers, total: 64 * MiB, prefix: rowsPrefix });
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.body)).toMatchObject({ detail: "invalid or revoked API key", code: "unauthenticated" });
    expect(answer.sentAtAnswer).toBeLessThan(32 * MiB);
  });

  const bomb = gzipSync(Buffer.alloc(60 * MiB, 0x20), { level: 9 }); // about 60 KB that inflate to 60 MiB
  const createMessage = "/meridian.featurestatus.v1.FeatureStatusService/CreateGlobalMessage";
  const connectJsonGzip = { "content-type": "application/json", "content-encoding": "gzip", "connect-protocol-version": "1" };

  it("D51 an anonymous Connect gzip bomb is answered 401 without inflating it, RSS +<10 MB", async () => {
    const { answer, rssGrowth } = await measured(() =>
      rawUpload(server.url, { httpVersion: "2", path: createMessage, headers: connectJsonGzip, total: bomb.length, prefix: bomb }),
    );
    console.log(
      `anonymous Connect gzip bomb (${(bomb.length / 1024).toFixed(0)} KB -> 60 MiB): ${answer.status}, server RSS +${(rssGrowth / MiB).toFixed(1)} MB`,
    );
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.body)).toMatchObject({ code: "unauthenticated" });
    expect(rssGrowth).toBeLessThan(RSS_BOUND);
  });

  it("D6 an authenticated Connect gzip bomb is refused resource_exhausted once it inflates past the method's 1 MiB, RSS +<10 MB", async () => {
    const { answer, rssGrowth } = await measured(() =>
      rawUpload(server.url, {
        httpVersion: "2",
        path: createMessage,
        headers: { ...connectJsonGzip, "svc-open-api-key": writer },
        total: bomb.length,
        prefix: bomb,
      }),
    );
    console.log(`authenticated Connect gzip bomb to a 1 MiB method: ${answer.status}, server RSS +${(rssGrowth / MiB).toFixed(1)} MB`);
    expect(JSON.parse(answer.body)).toMatchObject({ code: "resource_exhausted" });
    expect(answer.status).toBe(429); // Connect's HTTP status for resource_exhausted
    expect(rssGrowth).toBeLessThan(RSS_BOUND);
  });

  it("D6 a Connect upload that inflates past 64 MiB is refused resource_exhausted", async () => {
    const big = gzipSync(Buffer.alloc(70 * MiB, 0x20), { level: 9 });
    const ds = valuesPath.split("/")[4];
    const answer = await rawUpload(server.url, {
      httpVersion: "2",
      path: "/meridian.timeseries.v1.TimeSeriesService/UploadValues",
      headers: { ...connectJsonGzip, ...tsHeaders(writer, ds) },
      total: big.length,
      prefix: big,
    });
    expect(JSON.parse(answer.body)).toMatchObject({ code: "resource_exhausted" });
  });

  /** A gRPC envelope header declaring a message of `size` bytes. */
  const envelope = (size: number) => Buffer.from([0, size >>> 24, (size >>> 16) & 0xff, (size >>> 8) & 0xff, size & 0xff]);
  const uploadRpc = "/meridian.timeseries.v1.TimeSeriesService/UploadValues";

  it("D51 an anonymous 64 MiB gRPC call is answered status 16 before its body is read, RSS +<10 MB", async () => {
    const { answer, rssGrowth } = await measured(() =>
      rawUpload(server.url, {
        httpVersion: "2",
        path: uploadRpc,
        headers: { "content-type": "application/grpc", te: "trailers" },
        total: 64 * MiB,
        prefix: envelope(64 * MiB - 5),
        fill: 0,
      }),
    );
    console.log(
      `anonymous 64 MiB gRPC call: grpc-status ${String(answer.headers["grpc-status"] ?? answer.trailers["grpc-status"])}, ${(answer.sentAtAnswer / MiB).toFixed(1)} MiB sent at the answer, server RSS +${(rssGrowth / MiB).toFixed(1)} MB`,
    );
    expect(answer.status).toBe(200);
    expect(answer.headers["grpc-status"] ?? answer.trailers["grpc-status"]).toBe("16");
    expect(answer.sentAtAnswer).toBeLessThan(32 * MiB);
    expect(rssGrowth).toBeLessThan(RSS_BOUND);
  });

  it("D51 an anonymous 64 MiB gRPC-Web call is answered status 16 before its body is read, RSS +<10 MB", async () => {
    const { answer, rssGrowth } = await measured(() =>
      rawUpload(server.url, {
        httpVersion: "1.1",
        path: uploadRpc,
        headers: { "content-type": "application/grpc-web+proto" },
        total: 64 * MiB,
        prefix: envelope(64 * MiB - 5),
        fill: 0,
      }),
    );
    expect(answer.status).toBe(200);
    // gRPC-Web: the status is in the headers (trailers-only) or in the trailer frame of the body.
    expect(answer.headers["grpc-status"] ?? /grpc-status:\s*(\d+)/.exec(answer.body)?.[1]).toBe("16");
    expect(answer.sentAtAnswer).toBeLessThan(32 * MiB);
    expect(rssGrowth).toBeLessThan(RSS_BOUND);
  });
});
