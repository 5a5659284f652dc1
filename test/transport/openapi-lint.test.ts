// D59 the OpenAPI document passes `redocly lint` with the recommended rules
// (redocly.yaml: two rules off, each with its reason, and the parameters'
// examples checked too): no error and no warning, on the document the server
// serves. Redocly's telemetry is off (REDOCLY_TELEMETRY and the config): the
// lint sends nothing anywhere.
import { execFile } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../helpers/server.js";

const run = promisify(execFile);

let server: TestServer;
let dir: string;
beforeAll(async () => {
  server = await startTestServer();
  dir = mkdtempSync(join(tmpdir(), "meridian-lint-"));
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("D59 redocly lint", () => {
  it("D59 the served /openapi.json passes redocly lint (recommended rules) with no error and no warning", async () => {
    const file = join(dir, "openapi.json");
    writeFileSync(file, await (await fetch(server.url + "/openapi.json")).text());
    const redocly = realpathSync("node_modules/.bin/redocly");
    const lint = await run(process.execPath, [redocly, "lint", file, "--config", resolve("redocly.yaml"), "--format", "json"], {
      env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
    }).catch((e: unknown) => e as { stdout: string; stderr: string });
    const report = JSON.parse(lint.stdout) as { totals: Record<string, number>; problems: { ruleId: string; message: string }[] };
    expect(report.problems.map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  });
});
