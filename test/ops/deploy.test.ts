// The deployment kit (deploy/): a systemd unit and an environment file that
// keep up with the settings the server reads.
import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SETTINGS } from "../../src/config/settings.js";

const unit = readFileSync(new URL("../../deploy/meridian.service", import.meta.url), "utf8");
const envExample = readFileSync(new URL("../../deploy/meridian.env.example", import.meta.url), "utf8");
const analyze = spawnSync("systemd-analyze", ["--version"]).status === 0;

describe("deploy/", () => {
  it("D31 meridian.env.example names every setting the server reads, and the binary's cache directory", () => {
    const named = new Set([...envExample.matchAll(/^#?(MERIDIAN_[A-Z0-9_]+)=/gm)].map((m) => m[1]));
    expect([...SETTINGS.map((s) => s.env), "MERIDIAN_CACHE_DIR"].filter((e) => !named.has(e))).toEqual([]);
  });

  it("D38 the unit runs the binary as its own user, with a state directory, a read-only system, no new privileges, an environment file and restarts", () => {
    const keys = Object.fromEntries([...unit.matchAll(/^([A-Za-z]+)=(.*)$/gm)].map((m) => [m[1], m[2]]));
    expect(keys).toMatchObject({
      DynamicUser: "yes",
      StateDirectory: "meridian",
      ProtectSystem: "strict",
      NoNewPrivileges: "yes",
      EnvironmentFile: "-/etc/meridian/meridian.env",
      ExecStart: "/usr/local/bin/meridian serve",
      Restart: "on-failure",
      KillSignal: "SIGTERM",
    });
    expect(unit).toContain("Environment=MERIDIAN_DB=/var/lib/meridian/meridian.db");
  });

  it.skipIf(!analyze)("the unit passes systemd-analyze verify", () => {
    const dir = mkdtempSync(join(tmpdir(), "meridian-unit-"));
    try {
      // verify checks that ExecStart's program exists: any will do here.
      writeFileSync(join(dir, "meridian.service"), unit.replaceAll("/usr/local/bin/meridian", "/bin/true"));
      const r = spawnSync("systemd-analyze", ["verify", join(dir, "meridian.service")], { encoding: "utf8" });
      expect(r.stderr).toBe("");
      expect(r.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
