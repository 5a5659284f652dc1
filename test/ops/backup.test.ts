// D39 meridian backup FILE while the server runs and takes writes.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Database from "better-sqlite3";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BIN, TEST_BINARY, exited, meridian, serve } from "../helpers/cli.js";
import { draft } from "../helpers/messages.js";

const dir = mkdtempSync(join(tmpdir(), "meridian-backup-"));
const env = { MERIDIAN_DB: join(dir, "m.db") };
beforeAll(() => expect(meridian(["init"], env).status).toBe(0)); // only serve and init create a database (D56)
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `meridian backup` in its own process, not blocking this one (its server is answering writes meanwhile). */
function backup(args: string[]): Promise<{ status: number | null; stderr: string }> {
  const [program, lead] = TEST_BINARY ? [TEST_BINARY, []] : [process.execPath, [BIN]];
  const child = spawn(program, [...lead, "backup", ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.once("exit", (status) => resolve({ status, stderr })));
}

describe("D39 backups", () => {
  it(
    "D39 a backup taken during writes opens, passes integrity_check and holds every write acknowledged before it began",
    { timeout: 60_000 },
    async () => {
      const key = meridian(
        ["apikey", "create", "--client-id", "w", "--role", "BackOffice", "--scope", "platform_iam_featurestatus_readwrite"],
        env,
      ).stdout.trim();
      const { child, url } = await serve(env);
      try {
        const acked: { id: number; at: number }[] = [];
        let writing = true;
        // Four writers, each one request at a time, until told to stop.
        const writers = Array.from({ length: 4 }, async (_, w) => {
          for (let i = 0; writing; i++) {
            const r = await fetch(`${url}/api/admin/feature/message`, {
              method: "POST",
              headers: { "svc-open-api-key": key, "content-type": "application/json" },
              body: JSON.stringify(draft({ title: `w${w} #${i}`, body: `<p>${"x".repeat(2000)}</p>` })),
            });
            expect(r.status).toBe(201);
            acked.push({ id: ((await r.json()) as { id: number }).id, at: performance.now() });
          }
        });
        // Some rows first: by count, not by time, so a loaded machine waits longer instead of failing.
        while (acked.length <= 100) await new Promise((r) => setTimeout(r, 50));
        const began = performance.now();
        const target = join(dir, "copy.db");
        const result = await backup([target]);
        await new Promise((r) => setTimeout(r, 200)); // writes go on after it, too
        writing = false;
        await Promise.all(writers);
        expect(result.status).toBe(0);
        expect(result.stderr).toContain(`meridian backup: database ${env.MERIDIAN_DB}\n`);

        const before = acked.filter((a) => a.at < began).map((a) => a.id);
        expect(before.length).toBeGreaterThan(100);
        const copy = new Database(target, { readonly: true });
        try {
          expect(copy.pragma("integrity_check", { simple: true })).toBe("ok");
          const ids = new Set(copy.prepare("SELECT id FROM messages").pluck().all() as number[]);
          expect(before.filter((id) => !ids.has(id))).toEqual([]);
          // Consistent: one committed state, so the rows it holds are the first n ids.
          expect(Math.max(...ids)).toBe(ids.size);
        } finally {
          copy.close();
        }
        expect(readdirSync(dir).filter((f) => f.includes("partial"))).toEqual([]);
      } finally {
        child.kill("SIGTERM");
        await exited(child);
      }
    },
  );

  it("D39 an existing FILE is kept unless --force; a FILE is never left half written", async () => {
    const target = join(dir, "exists.db");
    writeFileSync(target, "mine");
    const refused = await backup([target]);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toBe(`meridian backup: ${target} exists; use --force to replace it\n`);
    const forced = await backup(["--force", target]);
    expect(forced.status).toBe(0);
    const copy = new Database(target, { readonly: true });
    expect(copy.pragma("integrity_check", { simple: true })).toBe("ok");
    copy.close();
  });

  it("D39 backup of a path with no database is refused and creates nothing", async () => {
    const r = meridian(["backup", join(dir, "x.db")], { MERIDIAN_DB: join(dir, "none", "m.db") });
    expect(r.status).toBe(78); // D56: the setting names no database
    expect(existsSync(join(dir, "none"))).toBe(false);
    expect(existsSync(join(dir, "x.db"))).toBe(false);
  });
});
