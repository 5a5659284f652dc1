// gRPC-Web text mode (issue 16 item 6), as Google's grpc-web client sends it
// by default: base64 frames in, base64 frames out, unary and server streaming,
// the frames the same as binary gRPC-Web's.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  FeatureStatusService,
  ListGlobalMessagesRequestSchema,
  ListMessagesResponseSchema,
} from "../../src/gen/meridian/featurestatus/v1/feature_status_pb.js";
import { ReadValuesRequestSchema, TimeSeriesService } from "../../src/gen/meridian/timeseries/v1/time_series_pb.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { envelope, envelopes } from "../helpers/envelopes.js";
import { draft } from "../helpers/messages.js";
import { TS_RW, makeRows, tsApi, tsHeaders } from "../helpers/timeseries.js";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** gRPC-Web frames: data messages, then the trailer frame's text. */
function frames(bytes: Buffer): { data: Buffer[]; trailer: string } {
  const all = envelopes(bytes);
  return { data: all.filter((e) => !(e.flags & 0x80)).map((e) => e.data), trailer: all.find((e) => e.flags & 0x80)?.data.toString() ?? "" };
}

async function call(path: string, message: Uint8Array, headers: Record<string, string>, text: boolean) {
  const body = envelope(message);
  const r = await fetch(`${server.url}${path}`, {
    method: "POST",
    headers: {
      ...headers,
      "content-type": text ? "application/grpc-web-text" : "application/grpc-web+proto",
      accept: text ? "application/grpc-web-text" : "application/grpc-web+proto",
      "x-grpc-web": "1",
    },
    body: text ? body.toString("base64") : new Uint8Array(body),
  });
  const raw = Buffer.from(await r.arrayBuffer());
  return {
    status: r.status,
    contentType: r.headers.get("content-type"),
    bytes: text ? Buffer.from(raw.toString("latin1"), "base64") : raw,
  };
}

describe("gRPC-Web text mode", () => {
  it("D5 a unary call in grpc-web-text answers base64 frames: the message and grpc-status 0", async () => {
    const key = await server.key({ roles: ["BackOffice"], scopes: ["platform_iam_featurestatus_readwrite"] });
    await fetch(`${server.url}/api/admin/feature/message`, {
      method: "POST",
      headers: { "svc-open-api-key": key, "content-type": "application/json" },
      body: JSON.stringify(draft({ title: "In text mode" })),
    });
    const r = await call(
      `/${FeatureStatusService.typeName}/ListGlobalMessages`,
      toBinary(ListGlobalMessagesRequestSchema, create(ListGlobalMessagesRequestSchema)),
      { "svc-open-api-key": key },
      true,
    );
    expect(r.status).toBe(200);
    expect(r.contentType).toBe("application/grpc-web-text+proto");
    const { data, trailer } = frames(r.bytes);
    expect(trailer).toMatch(/grpc-status: ?0/);
    expect(fromBinary(ListMessagesResponseSchema, data[0]).data.map((m) => m.title)).toEqual(["In text mode"]);
  });

  it("D5 a server-streaming read in grpc-web-text carries the same frames as in binary gRPC-Web", async () => {
    const key = await server.key(TS_RW);
    const ts = tsApi(server, key);
    const d = await ts.dataset();
    const s = await ts.series(d);
    await ts.upload(d, s, makeRows(50_000));
    const req = toBinary(ReadValuesRequestSchema, create(ReadValuesRequestSchema, { datasetId: d, timeSeriesId: s }));
    const path = `/${TimeSeriesService.typeName}/ReadValues`;
    const binary = await call(path, req, tsHeaders(key, d), false);
    const text = await call(path, req, tsHeaders(key, d), true);
    expect(text.status).toBe(200);
    const [b, t] = [frames(binary.bytes), frames(text.bytes)];
    expect(t.trailer).toMatch(/grpc-status: ?0/);
    expect(t.data.length).toBeGreaterThan(1);
    expect(Buffer.concat(t.data).equals(Buffer.concat(b.data))).toBe(true);
  });

  it("D5 D8 a text body that is not base64 is refused as a gRPC error, not a crash", async () => {
    const r = await fetch(`${server.url}/${FeatureStatusService.typeName}/ListGlobalMessages`, {
      method: "POST",
      headers: {
        "content-type": "application/grpc-web-text",
        "x-grpc-web": "1",
        "svc-open-api-key": await server.key({ scopes: ["platform_iam_featurestatus_read"] }),
      },
      body: "abc",
    });
    expect(r.status).toBe(200);
    const status =
      r.headers.get("grpc-status") ?? frames(Buffer.from(Buffer.from(await r.arrayBuffer()).toString("latin1"), "base64")).trailer;
    expect(status).not.toMatch(/^0$|grpc-status: ?0/);
  });

  it("D8 a text body that is not base64 is INVALID_ARGUMENT (grpc-status 3), whatever is wrong with it", async () => {
    const key = await server.key({ scopes: ["platform_iam_featurestatus_read"] });
    const good = envelope(toBinary(ListGlobalMessagesRequestSchema, create(ListGlobalMessagesRequestSchema))).toString("base64");
    // Its length is not a multiple of 4; characters outside base64; padding inside a quantum; URL-safe characters.
    for (const body of ["abc", "@@@@", "AAAAA", "A=AA", "AA=A" + good, good + "*", "-_-_"]) {
      const r = await fetch(`${server.url}/${FeatureStatusService.typeName}/ListGlobalMessages`, {
        method: "POST",
        headers: { "content-type": "application/grpc-web-text", "x-grpc-web": "1", "svc-open-api-key": key },
        body,
      });
      const text = Buffer.from(Buffer.from(await r.arrayBuffer()).toString("latin1"), "base64");
      const status = r.headers.get("grpc-status") ?? /grpc-status: ?(\d+)/.exec(frames(text).trailer)?.[1];
      expect([body, status]).toEqual([body, "3"]);
    }
  });
});
