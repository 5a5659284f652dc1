// D63 at least once across a crash: the real `meridian serve` killed (SIGKILL)
// between a write and its delivery, started again, delivers what the outbox
// held, in order. On the suite's backend (MERIDIAN_TEST_BACKEND).
import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exited, meridian, serve } from "../helpers/cli.js";
import { dropDatabases, freshDatabase } from "../helpers/databases.js";
import { draft } from "../helpers/messages.js";
import { SECRET, signatureValid, startReceiver, WEBHOOK_ENV } from "../helpers/webhooks.js";

const dir = mkdtempSync(join(tmpdir(), "meridian-webhook-"));
afterAll(async () => {
  await dropDatabases();
  rmSync(dir, { recursive: true, force: true });
});

describe("D63 delivery across a crash", () => {
  it("D63 Meridian killed between the write and the delivery delivers the events after restart, at least once and in order", async () => {
    const db = await freshDatabase(dir);
    const env = { MERIDIAN_DB: db, ...WEBHOOK_ENV };
    expect(meridian(["init"], env).status).toBe(0);
    const key = meridian(
      ["apikey", "create", "--client-id", "t", "--scope", "platform_iam_featurestatus_readwrite", "--role", "BackOffice"],
      env,
    ).stdout.trim();
    // The first delivery is never answered: the process dies while it waits.
    const rx = await startReceiver((_r, n) => (n === 1 ? "hang" : { status: 204 }));
    let served = await serve(env);
    try {
      const post = (path: string, body: unknown, method = "POST") =>
        fetch(served.url + path, {
          method,
          headers: { "svc-open-api-key": key, "content-type": "application/json" },
          body: JSON.stringify(body),
        }).then(async (r) => ({ status: r.status, json: await r.json() }));
      expect((await post("/api/admin/feature/message/webhooks", { url: rx.url, secret: SECRET })).status).toBe(201);
      const m = (await post("/api/admin/feature/crash/message", draft({ title: "before the crash" }))).json;
      expect((await post(`/api/admin/feature/crash/message/${m.id}`, { title: "also before" }, "PATCH")).status).toBe(200);
      await rx.until((r) => r.length >= 1); // message.created is in flight
      served.child.kill("SIGKILL");
      await exited(served.child);
      expect(rx.received.map((r) => r.body.type)).toEqual(["message.created"]); // the update waits behind it

      served = await serve(env);
      await rx.until((r) => r.some((x) => x.body.type === "message.updated"));
      const types = rx.received.map((r) => r.body.type);
      expect(types).toEqual(["message.created", "message.created", "message.updated"]);
      expect(rx.received[0].body.id).toBe(rx.received[1].body.id); // the same event, again
      expect(rx.received.map((r) => r.body.data.message.title)).toEqual(["before the crash", "before the crash", "also before"]);
      expect(rx.received.every((r) => signatureValid(r))).toBe(true);
    } finally {
      served.child.kill("SIGKILL");
      await rx.close();
    }
  }, 90_000); // two starts of the real command, which take seconds each on a loaded machine
});

describe("D63 meridian webhook", () => {
  it("D63 meridian webhook add|list|remove: add prints the secret deliveries are signed with, list never shows it, bad input changes nothing", async () => {
    const db = await freshDatabase(dir);
    const env = { MERIDIAN_DB: db, ...WEBHOOK_ENV };
    expect(meridian(["init"], env).status).toBe(0);
    const refused = meridian(["webhook", "add", "--url", "http://hooks.example/x"], env);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain("url: must be https:");
    expect(meridian(["webhook", "add", "--url", "https://hooks.example/x", "--event", "message.read"], env).stderr).toContain("events[0]");
    expect(meridian(["webhook", "list"], env).stdout).toBe("");

    const rx = await startReceiver();
    const added = meridian(["webhook", "add", "--url", rx.url, "--event", "message.created"], env);
    expect(added.status).toBe(0);
    const secret = added.stdout.trim();
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const id = /added webhook (\S+) for/.exec(added.stderr)![1];
    const listed = JSON.parse(meridian(["webhook", "list", "--json"], env).stdout);
    expect(listed).toEqual([{ id, url: rx.url, events: ["message.created"], createdAt: expect.any(String) }]);
    expect(meridian(["webhook", "list"], env).stdout).not.toContain(secret);

    const key = meridian(
      ["apikey", "create", "--client-id", "t", "--scope", "platform_iam_featurestatus_readwrite", "--role", "BackOffice"],
      env,
    ).stdout.trim();
    const served = await serve(env);
    try {
      await fetch(`${served.url}/api/admin/feature/message`, {
        method: "POST",
        headers: { "svc-open-api-key": key, "content-type": "application/json" },
        body: JSON.stringify(draft()),
      });
      const [r] = await rx.until((x) => x.length >= 1);
      expect(signatureValid(r, secret)).toBe(true);
    } finally {
      served.child.kill("SIGKILL");
      await exited(served.child);
      await rx.close();
    }
    expect(meridian(["webhook", "remove", id], env).status).toBe(0);
    expect(meridian(["webhook", "remove", id], env).status).toBe(1);
    expect(meridian(["webhook", "list"], env).stdout).toBe("");
  }, 90_000); // nine runs of the real command and a start
});
