// D56 (issue 26 item 8): what a new operator meets first: the help texts, the
// root of the port, a browser's favicon request, a CLI call from a checkout.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SETTINGS, flagOf } from "../../src/config/settings.js";
import { VERSION } from "../../src/version.js";
import { BIN, TEST_BINARY, meridian } from "../helpers/cli.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

const dir = mkdtempSync(join(tmpdir(), "meridian-first-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("D56 help texts", () => {
  it("D56 serve --help lists every flag with its variable", () => {
    const r = meridian(["serve", "--help"]);
    expect(r.status).toBe(0);
    for (const s of SETTINGS) expect(r.stdout).toMatch(new RegExp(`--${flagOf(s.env)}\\s+${s.env}\\s`));
  });

  it("D56 --help names MERIDIAN_CACHE_DIR and meridian init, and neither npm start nor decision numbers", () => {
    for (const args of [
      ["--help"],
      ["serve", "--help"],
      ["apikey", "--help"],
      ["import", "--help"],
      ["backup", "--help"],
      ["init", "--help"],
    ]) {
      const r = meridian(args);
      expect(r.status, args.join(" ")).toBe(0);
      expect(r.stdout, args.join(" ")).not.toMatch(/\bD\d{1,2}\b/);
      expect(r.stdout, args.join(" ")).not.toContain("npm start");
    }
    const top = meridian(["--help"]).stdout;
    expect(top).toContain("MERIDIAN_CACHE_DIR");
    expect(top).toContain("meridian init");
  });
});

describe("D56 the port's root", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server.app.close(1000);
    rmSync(server.dir, { recursive: true, force: true });
  });

  it("D56 GET / answers a short JSON index of where things are", async () => {
    const r = await fetch(`${server.url}/`);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/^application\/json/);
    const index = (await r.json()) as Record<string, string>;
    expect(index).toEqual({
      name: "Meridian",
      version: VERSION,
      docs: "/docs",
      openapi: "/openapi.json",
      health: "/healthz",
      console: "/console",
    });
    for (const path of [index.docs, index.openapi, index.health, index.console])
      expect((await fetch(server.url + path)).status, path).toBe(200);
  });

  it("D56 /favicon.ico is no 404", async () => {
    const r = await fetch(`${server.url}/favicon.ico`);
    expect(r.status).toBe(204);
  });

  it("D56 the OpenAPI document's descriptions hold no decision numbers", async () => {
    const text = await (await fetch(`${server.url}/openapi.json`)).text();
    expect(text.match(/.{40}\bD\d{1,2}\b.{10}/g) ?? []).toEqual([]);
  });
});

// /usr/bin/time (Debian's `time`) measures the call's CPU time.
describe.skipIf(TEST_BINARY || !existsSync("/usr/bin/time"))("D56 a CLI call from a checkout", () => {
  it("D56 bin/meridian.js answers quietly, without npm, and --version loads nothing of the server", () => {
    const db = join(dir, "m.db");
    expect(meridian(["init"], { MERIDIAN_DB: db }).status).toBe(0);
    // CPU time of the whole call (user + system, children included), which a loaded machine does not inflate as it does the wall clock.
    const cpu = (args: string[]) => {
      const r = spawnSync("/usr/bin/time", ["-f", "%U %S", process.execPath, BIN, ...args], {
        env: { ...process.env, MERIDIAN_DB: db },
        encoding: "utf8",
      });
      expect(r.status, r.stderr).toBe(0);
      const [user, sys] = r.stderr.trim().split("\n").at(-1)!.split(" ").map(Number);
      return { seconds: user + sys, stderr: r.stderr.trim().split("\n").slice(0, -1) };
    };
    const version = cpu(["--version"]);
    expect(version.stderr).toEqual([]);
    const list = cpu(["apikey", "list"]);
    expect(list.stderr).toEqual([`meridian apikey list: database ${db}`]);
    console.log(`CPU seconds: --version ${version.seconds.toFixed(2)}, apikey list ${list.seconds.toFixed(2)}`);
    expect(version.seconds).toBeLessThan(0.5);
    expect(list.seconds).toBeLessThan(0.5 * 2); // slack for a loaded machine; about 0.35 s when idle
  });
});
