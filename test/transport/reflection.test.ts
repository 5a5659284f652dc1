// D42 gRPC server reflection: buf curl (an independent client, Buf's own)
// lists the services and calls a method knowing nothing but the address.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { draft } from "../helpers/messages.js";

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
