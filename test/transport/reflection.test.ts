// D42 gRPC server reflection: buf curl (an independent client, Buf's own)
// lists the services and calls a method knowing nothing but the address.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { draft } from "../helpers/messages.js";
import { connectClient } from "../helpers/clients.js";
import { create, createFileRegistry, fromBinary, toJson, type MessageInitShape } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema, FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { ConnectError } from "@connectrpc/connect";
import { FeatureStatusService } from "../../src/gen/meridian/featurestatus/v1/feature_status_pb.js";
import { ServerReflection, ServerReflectionRequestSchema } from "../../src/gen/grpc/reflection/v1/reflection_pb.js";

const BUF = fileURLToPath(new URL("../../node_modules/.bin/buf", import.meta.url));
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** buf curl in its own process, not blocking this one (the server under test answers here). */
function bufCurl(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(BUF, ["curl", "--protocol", "grpc", "--http2-prior-knowledge", ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.once("exit", (status) => resolve({ status, stdout, stderr })));
}

describe("D42 gRPC reflection", () => {
  it.each(["v1", "v1alpha"])("D42 buf curl lists every service by reflection (%s)", async (version) => {
    const r = await bufCurl(["--reflect-protocol", `grpc-${version}`, "--list-services", server.url]);
    expect(r.stderr).toBe("");
    expect(r.stdout.trim().split("\n")).toEqual([
      "grpc.health.v1.Health",
      "grpc.reflection.v1.ServerReflection",
      "grpc.reflection.v1alpha.ServerReflection",
      "meridian.featurestatus.v1.FeatureStatusService",
      "meridian.featurestatus.v1.MessageDeliveryService",
      "meridian.timeseries.v1.TimeSeriesService",
    ]);
  });

  it("D42 buf curl calls a method by reflection alone, with its credentials, and reads the answer", async () => {
    const key = await server.key({ roles: ["BackOffice"], scopes: ["platform_iam_featurestatus_readwrite"] });
    const created = await fetch(`${server.url}/api/admin/feature/message`, {
      method: "POST",
      headers: { "svc-open-api-key": key, "content-type": "application/json" },
      body: JSON.stringify(draft({ title: "Seen by reflection" })),
    });
    expect(created.status).toBe(201);
    const r = await bufCurl([
      "-H",
      `svc-open-api-key: ${key}`,
      "-d",
      "{}",
      `${server.url}/meridian.featurestatus.v1.FeatureStatusService/ListGlobalMessages`,
    ]);
    expect(r.stderr).toBe("");
    expect(JSON.parse(r.stdout)).toMatchObject({ data: [{ title: "Seen by reflection", type: "Warning" }] });
  });

  it("D42 an unknown symbol is a reflection error, not a broken stream", async () => {
    const r = await bufCurl(["-d", "{}", `${server.url}/no.such.v1.Service/Method`]);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain("no.such.v1.Service");
  });
});

describe("D42 gRPC reflection describes the error details (issue 39 item 8)", () => {
  /** Asks the v1 reflection service one question over a real HTTP/2 connection (Connect's client, bidi stream). */
  async function ask(request: MessageInitShape<typeof ServerReflectionRequestSchema>["messageRequest"]) {
    const client = connectClient(ServerReflection, server.url);
    async function* one() {
      yield create(ServerReflectionRequestSchema, { messageRequest: request });
    }
    for await (const res of client.serverReflectionInfo(one())) return res.messageResponse;
    throw new Error("no answer");
  }

  const fileNames = (r: Awaited<ReturnType<typeof ask>>) =>
    r.case === "fileDescriptorResponse" ? r.value.fileDescriptorProto.map((b) => fromBinary(FileDescriptorProtoSchema, b).name) : r;

  it.each(["google.rpc.ErrorInfo", "google.rpc.BadRequest", "google.rpc.BadRequest.FieldViolation", "google.rpc.RetryInfo"])(
    "D42 the file of %s, a type an error's details may hold, is served by symbol with its imports",
    async (symbol) => {
      expect(fileNames(await ask({ case: "fileContainingSymbol", value: symbol }))).toEqual([
        "google/rpc/error_details.proto",
        "google/protobuf/duration.proto",
      ]);
    },
  );

  it.each([
    ["google/rpc/error_details.proto", ["google/protobuf/duration.proto"]],
    ["google/protobuf/duration.proto", []],
    ["meridian/featurestatus/v1/feature_status.proto", expect.arrayContaining(["google/api/annotations.proto"])],
  ])("D42 a file is served by its name, as imports name it: %s", async (name, imports) => {
    const names = fileNames(await ask({ case: "fileByFilename", value: name }));
    expect(names).toEqual(expect.arrayContaining([name]));
    expect((names as string[]).slice(1)).toEqual(imports);
  });

  it("D59 a client that knows nothing but reflection reads an error's ErrorInfo: its reason, not bytes", async () => {
    // buf curl (1.75) prints details only of the types compiled into it, so it shows base64 whatever the
    // server serves; this is what grpcurl and Postman do instead: resolve the Any's type by reflection.
    const call = connectClient(FeatureStatusService, server.url).deleteGlobalMessage(
      { messageId: 999_999 },
      { headers: { "svc-open-api-key": await server.key({ roles: ["BackOffice"], scopes: ["platform_iam_featurestatus_readwrite"] }) } },
    );
    const err = ConnectError.from(
      await call.then(
        () => undefined,
        (e: unknown) => e,
      ),
    );
    const [detail] = err.details as { type: string; value: Uint8Array }[];
    const answer = await ask({ case: "fileContainingSymbol", value: detail.type });
    if (answer.case !== "fileDescriptorResponse") throw new Error(`not resolved: ${JSON.stringify(answer)}`);
    // The file asked for comes first, its imports after; a registry takes them imports first.
    const files = answer.value.fileDescriptorProto.map((b) => fromBinary(FileDescriptorProtoSchema, b)).reverse();
    const registry = createFileRegistry(create(FileDescriptorSetSchema, { file: files }));
    const schema = registry.getMessage(detail.type)!;
    expect(toJson(schema, fromBinary(schema, detail.value))).toEqual({ reason: "MESSAGE_NOT_FOUND", domain: "meridian" });
  });
});
