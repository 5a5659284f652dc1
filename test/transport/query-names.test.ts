// D51: every cache is bounded in bytes. The REST query names a route accepts
// are resolved at start-up; unknown names, however many and long, are kept nowhere.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { buildRestRoutes } from "../../src/transport/rest/rest-routes.js";
import { createServiceImplSpec } from "@connectrpc/connect";
import { FeatureStatusService } from "../../src/gen/meridian/featurestatus/v1/feature_status_pb.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { TS_RW, tsApi, tsHeaders } from "../helpers/timeseries.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

let server: TestServer;
beforeAll(async () => (server = await startTestServer()));
afterAll(() => server.close());

describe("D51 query parameter names", () => {
  it("D51 a route's query names are a table fixed at start-up: JSON and proto spellings of its scalar fields, none bound by the path", () => {
    const trie = buildRestRoutes(Object.values(createServiceImplSpec(FeatureStatusService, {}).methods));
    const m = trie.match("GET", ["api", "admin", "feature", "f1", "message"]);
    if (m.kind !== "found") throw new Error("no route");
    expect([...m.route.queryFields.keys()].sort()).toEqual([
      "audience",
      "cursor",
      "expiry",
      "lang",
      "limit",
      "path",
      "sortBy",
      "sortOrder",
      "sort_by",
      "sort_order",
    ]);
  });

  it("D51 thousands of distinct long unknown query names leave the server's heap where it was", async () => {
    const reader = await server.key({
      clientId: "r",
      scopes: ["platform_iam_featurestatus_readwrite", "platform_timeseries_readwrite"],
      roles: ["BackOffice"],
      projects: TS_RW.projects,
    });
    const ds = await tsApi(server, await server.key(TS_RW)).dataset();
    const paths = ["/api/admin/feature/message", `/api/ts/dataset/${ds}/timeseries/list`];
    const name = (i: number) => `x${i}`.padEnd(8 * 1024, "y");
    const send = async (from: number, n: number) => {
      for (let i = from; i < from + n; i++) {
        for (const p of paths) {
          const r = await fetch(`${server.url}${p}?${name(i)}=1`, {
            headers: { "svc-open-api-key": reader, ...tsHeaders(reader, p.includes(ds) ? ds : undefined) },
          });
          expect(r.status).toBe(200);
          await r.arrayBuffer();
        }
      }
    };
    await send(0, 50); // warm up
    gc();
    const before = process.memoryUsage().heapUsed;
    await send(50, 1000); // 2 routes x 1000 names x 8 KiB: 16 MiB if they were kept
    gc();
    const growth = process.memoryUsage().heapUsed - before;
    console.log(`heap after 2,000 requests with distinct 8 KiB unknown query names: ${(growth / 1024 / 1024).toFixed(1)} MB`);
    expect(growth).toBeLessThan(6 * 1024 * 1024);
  });
});
