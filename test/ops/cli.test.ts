// D11, D31, D33: the meridian command.
import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SETTINGS } from "../../src/config/settings.js";
import { SERVE_NODE_FLAGS } from "../../src/cli/node-flags.js";
import { BIN, TEST_BINARY, exited, meridian, serve } from "../helpers/cli.js";
import { secretOf } from "../helpers/server.js";

const dir = mkdtempSync(join(tmpdir(), "meridian-cli-"));
const env = { MERIDIAN_DB: join(dir, "m.db"), MERIDIAN_LOG_LEVEL: "info" };
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("D31 settings and help", () => {
  it("D31 meridian --help lists every setting with its default", () => {
    const r = meridian(["--help"]);
    expect(r.status).toBe(0);
    for (const s of SETTINGS) expect(r.stdout).toContain(s.env);
    expect(r.stdout).toMatch(/MERIDIAN_PORT\s+8080/);
    expect(r.stdout).toMatch(/MERIDIAN_DB\s+\.\/data\/meridian\.db/);
    expect(r.stdout).toMatch(/MERIDIAN_HOST\s+127\.0\.0\.1/);
  });

  it("D31 a bad setting stops serve with a clear message and exit 2", () => {
    const r = meridian(["serve"], { ...env, MERIDIAN_PORT: "eighty" });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("MERIDIAN_PORT");
    const f = meridian(["serve", "--port", "-5"], env);
    expect(f.status).toBe(2);
    expect(f.stderr).toContain("--port");
  });

  it("D31 D37 a flag wins over the environment, and start-up logs address, database, version and the Node version", async () => {
    // The environment names a host that cannot be bound; the flag's must be used.
    const { child, url, stderr } = await serve({ ...env, MERIDIAN_HOST: "256.0.0.1" }, ["--host", "127.0.0.1"]);
    child.kill("SIGTERM");
    expect(await exited(child)).toBe(0);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const line = stderr().split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => "address" in l)!;
    expect(line).toMatchObject({ address: url, db: env.MERIDIAN_DB, version: expect.stringMatching(/^\d+\.\d+\.\d+/), node: process.version });
    expect(line.msg).toContain(`on Node ${process.version}`);
  });

  it("D37 npm test runs on the project's own Node 26, whatever node the machine has", () => {
    expect(process.versions.node.split(".")[0]).toBe("26");
  });
});

// How node is given the flags concerns bin/meridian.js; the binary carries them itself (tested in test/release).
describe.skipIf(TEST_BINARY)("serve's node flags (src/cli/node-flags.ts)", () => {
  const warnings = (stderr: string) =>
    stderr.split("\n").filter(Boolean).map((l) => JSON.parse(l) as { level: number; missing?: string[] }).filter((l) => l.missing);

  it("bin/meridian.js's first line gives node the server's flags", () => {
    const first = readFileSync(BIN, "utf8").split("\n", 1)[0];
    expect(first).toBe(`#!/usr/bin/env -S node ${SERVE_NODE_FLAGS.join(" ")}`);
  });

  it("run as a program (meridian serve, npm start), serve has the flags and warns of nothing", async () => {
    const { child, stderr } = await serve(env, [], true);
    child.kill("SIGTERM");
    expect(await exited(child)).toBe(0);
    expect(warnings(stderr())).toEqual([]);
  });

  it("started by plain node, serve still serves and logs a warning naming the missing flags", async () => {
    const { child, url, stderr } = await serve(env);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    child.kill("SIGTERM");
    expect(await exited(child)).toBe(0);
    expect(warnings(stderr())).toEqual([expect.objectContaining({ level: 40, missing: [...SERVE_NODE_FLAGS] })]);
  });
});

describe("D33 apikey commands", () => {
  it("D11 D33 create prints the key alone on stdout; list shows it without the secret; revoke makes it fail", async () => {
    const created = meridian(["apikey", "create", "--client-id", "ops", "--role", "BackOffice", "--scope", "platform_iam_featurestatus_read", "--project", "p1"], env);
    expect(created.status).toBe(0);
    const key = created.stdout.trim();
    expect(created.stdout).toBe(`${key}\n`);
    expect(key).toMatch(/^mrd_[a-z0-9]{12}_/);
    const id = key.split("_")[1];

    const listed = meridian(["apikey", "list", "--json"], env);
    const keys = JSON.parse(listed.stdout) as { id: string; clientId: string; roles: string[]; scopes: string[]; projects: string[]; createdAt: string }[];
    expect(keys).toContainEqual(expect.objectContaining({ id, clientId: "ops", roles: ["BackOffice"], scopes: ["platform_iam_featurestatus_read"], projects: ["p1"] }));
    expect(listed.stdout).not.toContain(secretOf(key));

    // Revoke while the server runs (D33): the key gets 401 from then on.
    const { child, url } = await serve(env);
    try {
      const before = await fetch(`${url}/api/admin/feature/message`, { headers: { "svc-open-api-key": key } });
      expect(before.status).not.toBe(401);
      const revoked = meridian(["apikey", "revoke", id], env);
      expect(revoked.status).toBe(0);
      const after = await fetch(`${url}/api/admin/feature/message`, { headers: { "svc-open-api-key": key } });
      expect(after.status).toBe(401);
    } finally {
      child.kill("SIGTERM");
      await exited(child);
    }
    expect(meridian(["apikey", "revoke", id], env).status).toBe(1);
    expect(JSON.parse(meridian(["apikey", "list", "--json"], env).stdout)).not.toContainEqual(expect.objectContaining({ id }));
  });

  it("D33 create without --client-id is refused", () => {
    const r = meridian(["apikey", "create"], env);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe("");
  });
});
