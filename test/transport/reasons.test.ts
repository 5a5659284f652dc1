// D59: every error names a stable reason from one table (src/kernel/reasons.ts):
// `reason` in problem+json, google.rpc.ErrorInfo over gRPC and Connect; the
// table is in the OpenAPI document and the README.
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { ConnectError } from "@connectrpc/connect";
import { findTrailerError } from "@connectrpc/connect/protocol-grpc";
import { ErrorInfoSchema } from "../../src/gen/google/rpc/error_details_pb.js";
import { FeatureStatusService } from "../../src/gen/meridian/featurestatus/v1/feature_status_pb.js";
import { REASONS, allReasons } from "../../src/kernel/reasons.js";
import { api, draft, useMessageServer } from "../helpers/messages.js";
import { connectClient, grpcUnary, hostPort } from "../helpers/clients.js";
import { TS_RW, tsApi } from "../helpers/timeseries.js";

const t = useMessageServer();

const reasonOf = async (r: Response) => ((await r.json()) as { reason?: string }).reason;

describe("D59 stable error reasons", () => {
  it("D59 REST problems name their reason", async () => {
    const { a } = t;
    const m = (await a.create("reasons", draft())).json;
    const cases: [string, Promise<{ status: number; json: { reason?: string } }>, number][] = [
      ["MESSAGE_NOT_FOUND", a.update("reasons", 999_999, { title: "x" }), 404],
      ["CURSOR_INVALID", a.list("reasons", "cursor=not-a-cursor"), 400],
      ["UNKNOWN_FIELD", a.create("reasons", { ...draft(), bdy: "x" }), 400],
      ["INVALID_FIELD", a.create("reasons", { ...draft(), type: "Loud" }), 400],
      [
        "PERMISSION_DENIED",
        api(t.server, await t.server.key({ scopes: ["platform_iam_featurestatus_read"] })).create("reasons", draft()),
        403,
      ],
    ];
    for (const [reason, call, status] of cases) {
      const r = await call;
      expect([r.status, r.json.reason], reason).toEqual([status, reason]);
    }
    const stale = await fetch(`${t.server.url}/api/admin/feature/reasons/message/${m.id}`, {
      method: "PATCH",
      headers: { "svc-open-api-key": t.key, "content-type": "application/json", "if-match": '"1.99"' },
      body: JSON.stringify({ title: "y" }),
    });
    expect(stale.status).toBe(412);
    expect(await reasonOf(stale)).toBe("ETAG_MISMATCH");
    const noKey = await fetch(`${t.server.url}/api/admin/feature/message`);
    expect([noKey.status, await reasonOf(noKey)]).toEqual([401, "CREDENTIALS_MISSING"]);
    const badKey = await fetch(`${t.server.url}/api/admin/feature/message`, { headers: { "svc-open-api-key": "nope" } });
    expect([badKey.status, await reasonOf(badKey)]).toEqual([401, "CREDENTIALS_INVALID"]);
    const route = await fetch(`${t.server.url}/api/nothing/here`);
    expect([route.status, await reasonOf(route)]).toEqual([404, "ROUTE_NOT_FOUND"]);
    const ts = tsApi(t.server, await t.server.key(TS_RW));
    const d = await ts.dataset();
    const series = await ts.call("GET", `/api/ts/dataset/${d}/timeseries/00000000-0000-4000-8000-000000000000`);
    expect([series.status, series.json.reason]).toEqual([404, "TIME_SERIES_NOT_FOUND"]);
  });

  it("D59 an insert past the last message id is MESSAGE_IDS_EXHAUSTED, not a 500", async () => {
    const { a } = t;
    const m = (await a.create(null, draft())).json;
    // The next id the database hands out is past the API's int32.
    if (t.server.db.startsWith("postgres")) await t.server.query(`SELECT setval(pg_get_serial_sequence('messages', 'id'), 2147483647)`);
    else await t.server.query(`UPDATE sqlite_sequence SET seq = 2147483647 WHERE name = 'messages'`);
    const r = await a.create(null, draft());
    expect([r.status, r.json.reason]).toEqual([507, "MESSAGE_IDS_EXHAUSTED"]);
    expect((await a.list(null, "expiry=All&limit=1000")).json.data.map((x: { id: number }) => x.id)).toContain(m.id);
  });

  it("D59 gRPC callers read the reason in google.rpc.ErrorInfo (grpc-status-details-bin)", async () => {
    const r = await grpcUnary(
      hostPort(t.server.url),
      FeatureStatusService.method.deleteGlobalMessage,
      { messageId: 999_999 },
      { "svc-open-api-key": t.key },
    );
    expect(r.error?.code).toBe(5);
    // grpc-js hands the -bin trailer over decoded; Connect's gRPC trailer reader takes it as sent (base64).
    const bin = r.error!.metadata.get("grpc-status-details-bin")[0] as Buffer;
    const err = findTrailerError(new Headers({ "grpc-status": "5", "grpc-status-details-bin": bin.toString("base64") }));
    expect(err?.findDetails(ErrorInfoSchema)).toEqual([expect.objectContaining({ reason: "MESSAGE_NOT_FOUND", domain: "meridian" })]);
  });

  it("D59 Connect callers read it too, also for a refusal made before any handler", async () => {
    const client = connectClient(FeatureStatusService, t.server.url);
    for (const [headers, reason] of [
      [{ "svc-open-api-key": t.key }, "MESSAGE_NOT_FOUND"],
      [{}, "CREDENTIALS_MISSING"],
    ] as const) {
      const err = await client.deleteGlobalMessage({ messageId: 999_999 }, { headers }).catch((e: unknown) => ConnectError.from(e));
      expect(err).toBeInstanceOf(ConnectError);
      expect((err as ConnectError).findDetails(ErrorInfoSchema).map((i) => i.reason)).toEqual([reason]);
    }
  });

  it("D59 one table: the OpenAPI document's Problem.reason and the README list every reason", async () => {
    const doc = await (await fetch(`${t.server.url}/openapi.json`)).json();
    expect(doc.components.schemas.Problem.properties.reason.enum).toEqual(allReasons());
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
    for (const reason of Object.keys(REASONS)) expect(readme, reason).toContain(`| \`${reason}\` |`);
  });
});
