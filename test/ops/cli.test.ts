// D11, D31, D33: the meridian command.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SETTINGS } from "../../src/config/settings.js";
import { SERVE_NODE_FLAGS } from "../../src/cli/node-flags.js";
import { BIN, TEST_BINARY, exited, meridian, serve } from "../helpers/cli.js";
import { secretOf } from "../helpers/server.js";

const dir = mkdtempSync(join(tmpdir(), "meridian-cli-"));
const env = { MERIDIAN_DB: join(dir, "m.db"), MERIDIAN_LOG_LEVEL: "info" };
// Only serve and init create a database (D56).
beforeAll(() => expect(meridian(["init"], env).status).toBe(0));
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

  it("D31 D56 a bad setting stops serve with a clear message and exit 78", () => {
    const r = meridian(["serve"], { ...env, MERIDIAN_PORT: "eighty" });
    expect(r.status).toBe(78);
    expect(r.stderr).toBe("meridian serve: MERIDIAN_PORT=eighty: must be an integer from 0 to 65535\n");
    const f = meridian(["serve", "--port", "99999"], env);
    expect(f.status).toBe(78);
    expect(f.stderr).toBe("meridian serve: --port=99999: must be an integer from 0 to 65535\n");
  });

  it("D31 D37 a flag wins over the environment, and start-up logs address, database, version and the Node version", async () => {
    // The environment names a host that cannot be bound; the flag's must be used.
    const { child, url, stderr } = await serve({ ...env, MERIDIAN_HOST: "256.0.0.1" }, ["--host", "127.0.0.1"]);
    child.kill("SIGTERM");
    expect(await exited(child)).toBe(0);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const line = stderr()
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => "address" in l)!;
    expect(line).toMatchObject({
      address: url,
      db: env.MERIDIAN_DB,
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
      node: process.version,
    });
    expect(line.msg).toContain(`on Node ${process.version}`);
  });

  it("D37 npm test runs on the project's own Node 26, whatever node the machine has", () => {
    expect(process.versions.node.split(".")[0]).toBe("26");
  });
});

// How node is given the flags concerns bin/meridian.js; the binary carries them itself (tested in test/release).
describe.skipIf(TEST_BINARY)("serve's node flags (src/cli/node-flags.ts)", () => {
  const warnings = (stderr: string) =>
    stderr
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { level: number; missing?: string[] })
      .filter((l) => l.missing);

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
    const created = meridian(
      ["apikey", "create", "--client-id", "ops", "--role", "BackOffice", "--scope", "platform_iam_featurestatus_read", "--project", "p1"],
      env,
    );
    expect(created.status).toBe(0);
    const key = created.stdout.trim();
    expect(created.stdout).toBe(`${key}\n`);
    expect(key).toMatch(/^mrd_[a-z0-9]{12}_/);
    const id = key.split("_")[1];

    const listed = meridian(["apikey", "list", "--json"], env);
    const keys = JSON.parse(listed.stdout) as {
      id: string;
      clientId: string;
      roles: string[];
      scopes: string[];
      projects: string[];
      createdAt: string;
    }[];
    expect(keys).toContainEqual(
      expect.objectContaining({
        id,
        clientId: "ops",
        roles: ["BackOffice"],
        scopes: ["platform_iam_featurestatus_read"],
        projects: ["p1"],
      }),
    );
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

describe("D33 the operator's first hour", () => {
  it("D33 a busy port is one line and exit 1, and no database is created", async () => {
    const holder = createServer().listen(0, "127.0.0.1");
    await new Promise((r) => holder.once("listening", r));
    const port = (holder.address() as AddressInfo).port;
    const db = join(dir, "busy-port", "never.db");
    try {
      const r = await runAsync(["serve"], { MERIDIAN_DB: db, MERIDIAN_PORT: String(port) });
      expect(r.status).toBe(1);
      expect(r.stderr).toBe(
        `meridian serve: MERIDIAN_PORT=${port}: the port is in use by another process; stop that process or set MERIDIAN_PORT to a free port\n`,
      );
      expect(existsSync(join(dir, "busy-port"))).toBe(false);
    } finally {
      holder.close();
    }
  });

  it("D33 every command names its database on stderr", () => {
    const created = meridian(["apikey", "create", "--client-id", "named", "--role", "BackOffice"], env);
    expect(created.stderr).toContain(`meridian apikey create: database ${env.MERIDIAN_DB}\n`);
    expect(meridian(["apikey", "list"], env).stderr).toBe(`meridian apikey list: database ${env.MERIDIAN_DB}\n`);
  });

  it.each([["create", "--client-id", "c", "--role", "BackOffice"], ["list"], ["revoke", "abcdefghijkl"]])(
    "D33 D56 apikey %s refuses a path with no database instead of creating one",
    (...args) => {
      const db = join(dir, "nothing-here", "m.db");
      const r = meridian(["apikey", ...args], { MERIDIAN_DB: db });
      expect(r.status).toBe(78);
      expect(r.stderr).toBe(
        `meridian apikey ${args[0]}: MERIDIAN_DB=${db}: no database there; set MERIDIAN_DB to the server's database file, or create one with meridian init\n`,
      );
      expect(r.stdout).toBe("");
      expect(existsSync(join(dir, "nothing-here"))).toBe(false);
    },
  );

  it("D33 apikey create refuses an unknown scope or role, naming the valid ones; --help lists them", () => {
    const scope = meridian(["apikey", "create", "--client-id", "x", "--scope", "platform_iam_featurestatus_write"], env);
    expect(scope.status).toBe(2);
    expect(scope.stderr.split("\n")[0]).toBe(
      'meridian apikey: unknown scope "platform_iam_featurestatus_write"; scopes are platform_iam_featurestatus_read, platform_iam_featurestatus_readwrite, platform_timeseries_read, platform_timeseries_readwrite',
    );
    const role = meridian(["apikey", "create", "--client-id", "x", "--role", "backoffice"], env);
    expect(role.status).toBe(2);
    expect(role.stderr.split("\n")[0]).toBe('meridian apikey: unknown role "backoffice"; roles are BackOffice');
    const help = meridian(["apikey", "create", "--help"], env);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain("platform_timeseries_readwrite");
    expect(help.stdout).toContain("BackOffice");
  });

  it.each([["import"], ["init"], ["apikey", "create"], ["apikey", "list"], ["apikey", "revoke"], ["backup"], ["serve"]])(
    "D33 meridian %s --help prints its usage",
    (...cmd) => {
      const r = meridian([...cmd, "--help"], env);
      expect(r.status).toBe(0);
      expect(r.stdout).toMatch(/^usage:/);
      expect(r.stderr).toBe("");
    },
  );

  it("D33 an unknown option is one line naming it, then the usage, exit 2", () => {
    const r = meridian(["import", "--colour", "x"], env);
    expect(r.status).toBe(2);
    expect(r.stderr.split("\n")[0]).toBe("meridian import: unknown option --colour");
    expect(r.stderr).toContain("usage: meridian import");
  });

  it.for([
    [["import", "--datset", "x"], "meridian import: unknown option --datset; did you mean --dataset?"],
    [["serve", "--prot", "9000"], "meridian serve: unknown option --prot; did you mean --port?"],
    [["serve", "--hots=0.0.0.0"], "meridian serve: unknown option --hots; did you mean --host?"],
    [["apikey", "lst"], 'meridian apikey: unknown subcommand "lst"; did you mean list?'],
    [["srve"], 'meridian: unknown command "srve"; did you mean "serve"? (meridian --help lists the commands)'],
  ] as const)(
    "D33 a typo of a known option or command is answered with the name meant, not the whole usage (issue 39 item 12): %s",
    ([args, line]) => {
      const r = meridian([...args], env);
      expect(r.status).toBe(2);
      expect(r.stderr.split("\n")[0]).toBe(line);
      expect(r.stderr).not.toContain("MERIDIAN_PORT"); // no usage listing every setting buries it
    },
  );

  it("D33 a missing CSV or backup folder is one line in words, not the raw error of an open (issue 39 item 12)", () => {
    const csv = meridian(["import", "--dataset", "d", "--series", "s", join(dir, "missing.csv")], env);
    expect(csv.status).toBe(1);
    expect(csv.stderr.split("\n").at(-2)).toBe(`meridian import: there is no file ${join(dir, "missing.csv")}; nothing was imported`);
    const target = join(dir, "no-such-folder", "copy.db");
    const backup = meridian(["backup", target], env);
    expect([backup.status, backup.stderr]).toEqual([
      1,
      `meridian backup: there is no folder ${join(dir, "no-such-folder")} for ${target}; create it or name a file in an existing folder\n`,
    ]);
  });

  it("D11 D33 apikey revoke accepts the whole key as well as its id", () => {
    const key = meridian(["apikey", "create", "--client-id", "whole", "--role", "BackOffice"], env).stdout.trim();
    const r = meridian(["apikey", "revoke", key], env);
    expect(r.status).toBe(0);
    expect(r.stderr).toContain(`revoked API key ${key.split("_")[1]}`);
    expect(JSON.parse(meridian(["apikey", "list", "--json"], env).stdout)).not.toContainEqual(
      expect.objectContaining({ clientId: "whole" }),
    );
  });
});

/** The meridian command without blocking the event loop (a server in this process must answer meanwhile). */
function runAsync(args: string[], extra: Record<string, string>): Promise<{ status: number | null; stderr: string }> {
  const [program, lead] = TEST_BINARY ? [TEST_BINARY, []] : [process.execPath, [BIN]];
  const child = spawn(program, [...lead, ...args], { env: { ...process.env, ...extra }, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.once("exit", (status) => resolve({ status, stderr })));
}
