// D22 cleanup of expired messages.
import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import Database from "better-sqlite3";
import { neverWaitForLocks, openDatabase } from "../../src/sqlite/database.js";
import { SqliteMessageStore } from "../../src/sqlite/message-store.js";
import { startCleanup } from "../../src/featurestatus/messages/cleanup.js";
import { MessageWrites } from "../../src/featurestatus/messages/message-writes.js";
import { ChangeBus } from "../../src/featurestatus/live/change-bus.js";
import { startTestServer } from "../helpers/server.js";

const dir = mkdtempSync(join(tmpdir(), "meridian-ret-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const DAY = 86_400;

/** The store and the writes through it, as the server makes them. */
function targets(store: SqliteMessageStore) {
  return { store, writes: new MessageWrites(store, new ChangeBus()) };
}

async function seed(store: SqliteMessageStore, now: number) {
  const add = async (feature: string | null, expiredDaysAgo: number) =>
    (
      await targets(store).writes.create({
        featureId: feature,
        type: "Warning",
        dismissible: true,
        title: "t",
        body: "",
        startDate: now - expiredDaysAgo * DAY - 10,
        expiringDate: now - expiredDaysAgo * DAY,
      })
    ).id;
  return { oldFeature: await add("f", 31), oldGlobal: await add(null, 45), recent: await add("f", 29), live: await add(null, -1) };
}

describe("D22 retention", () => {
  it("D22 deletes messages expired longer ago than the retention, global ones too, and logs how many (injected clock)", async () => {
    const db = openDatabase(join(dir, "a.db"));
    const store = new SqliteMessageStore(db);
    const now = 2_000_000_000;
    const ids = await seed(store, now);
    const logs: { deleted?: number }[] = [];
    const logger = pino({ level: "info" }, { write: (s: string) => void logs.push(JSON.parse(s)) });
    const job = startCleanup(targets(store), { intervalS: 3600, retentionDays: 30, logger, now: () => now });
    await job.first;
    job.stop();
    expect(await store.get(ids.oldFeature)).toBeUndefined();
    expect(await store.get(ids.oldGlobal)).toBeUndefined();
    expect(await store.get(ids.recent)).toBeDefined();
    expect(await store.get(ids.live)).toBeDefined();
    expect(logs.find((l) => l.deleted !== undefined)?.deleted).toBe(2);
    // A shorter retention reaches the recent one too.
    const job2 = startCleanup(targets(store), { intervalS: 3600, retentionDays: 10, logger, now: () => now });
    await job2.first;
    job2.stop();
    expect(await store.get(ids.recent)).toBeUndefined();
    expect(await store.get(ids.live)).toBeDefined();
    db.close();
  });

  it("D22 D51 a run that meets a held write lock is skipped with a warning, not logged as an error, and the next run deletes", async () => {
    const file = join(dir, "busy.db");
    const db = openDatabase(file);
    neverWaitForLocks(db); // as the server's connection, once serving
    const store = new SqliteMessageStore(db);
    const now = 2_000_000_000;
    const ids = await seed(store, now);
    const importer = new Database(file);
    importer.exec("BEGIN IMMEDIATE"); // an import's transaction holding the write lock
    const logs: { level: number; msg: string; deleted?: number }[] = [];
    const logger = pino({ level: "info" }, { write: (s: string) => void logs.push(JSON.parse(s)) });
    const job = startCleanup(targets(store), { intervalS: 3600, retentionDays: 30, logger, now: () => now });
    await job.first;
    job.stop();
    expect(logs.map((l) => [l.level, l.msg])).toEqual([
      [40, "message cleanup skipped: the database is busy; it runs again at the next interval"],
    ]);
    expect(await store.get(ids.oldFeature)).toBeDefined();
    importer.exec("ROLLBACK");
    importer.close();
    expect(await job.runOnce()).toBe(2);
    db.close();
  });

  it("D22 runs at start and every MERIDIAN_CLEANUP_INTERVAL_S on the real clock", async () => {
    const server = await startTestServer({ MERIDIAN_CLEANUP_INTERVAL_S: "1", MERIDIAN_MESSAGE_RETENTION_DAYS: "0" });
    try {
      const runs = () => server.logs.filter((l) => typeof l.deleted === "number").length;
      expect(runs()).toBe(1); // at start, before start-up is over
      const store = server.app.backend.messages;
      const now = Math.floor(Date.now() / 1000);
      const { id } = await server.app.messageWrites.create({
        featureId: null,
        type: "Warning",
        dismissible: true,
        title: "t",
        body: "",
        startDate: now - 100,
        expiringDate: now - 5,
      });
      const deadline = Date.now() + 5000;
      while ((await store.get(id)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(await store.get(id)).toBeUndefined();
      // The run logs once its gate's transaction commits, a few round trips after the deletion is visible.
      while (runs() < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(runs()).toBeGreaterThanOrEqual(2);
    } finally {
      await server.close();
    }
  });
});
