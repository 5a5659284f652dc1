// Storage: WAL, versioned migrations that run at start, one schema owner.
import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { SERVING_PAGE_CACHE_KIB, migrate, openDatabase, schemaVersion } from "../../src/sqlite/database.js";
import { openBackend } from "../../src/app/backend.js";
import { loadSettings } from "../../src/config/settings.js";
import { createLogger } from "../../src/log/logger.js";
import { MIGRATIONS } from "../../src/sqlite/schema.js";
import { SqliteBlockStore } from "../../src/sqlite/block-store.js";
import { crc32c } from "../../src/native/crc32c.js";

const dir = mkdtempSync(join(tmpdir(), "meridian-db-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("database", () => {
  it("opens in WAL mode with every migration applied", () => {
    const db = openDatabase(join(dir, "m.db"));
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(schemaVersion(db)).toBe(MIGRATIONS[MIGRATIONS.length - 1].version);
    db.close();
  });

  it("migrations are versioned: a second start applies nothing, a new one applies only itself", () => {
    const path = join(dir, "v.db");
    openDatabase(path).close();
    const db = new Database(path);
    expect(migrate(db, MIGRATIONS)).toBe(0);
    const next = [...MIGRATIONS, { version: MIGRATIONS.length + 1, name: "test", sql: "CREATE TABLE extra (x INTEGER) STRICT;" }];
    expect(migrate(db, next)).toBe(1);
    expect(schemaVersion(db)).toBe(MIGRATIONS.length + 1);
    db.close();
  });

  it("D28 the serving SQLite connection caches at most 256 KiB of pages, so a long read leaves no more there than a short one; a CLI command keeps better-sqlite3's 16 MB", async () => {
    const backend = await openBackend(loadSettings({ MERIDIAN_DB: join(dir, "serving.db") }), "file");
    try {
      const db = backend.sqlite;
      if (!db) throw new Error("no SQLite connection");
      expect(db.pragma("cache_size", { simple: true })).toBe(-16000); // a CLI command's (an import)
      backend.serving(createLogger("silent"));
      expect(SERVING_PAGE_CACHE_KIB).toBe(256);
      expect(db.pragma("cache_size", { simple: true })).toBe(-256);
    } finally {
      await backend.close();
    }
  });

  it("D65 a chart's block index is read from an index of its own (sid, first_ts, last_ts, summary), never through the payloads", () => {
    const db = openDatabase(join(dir, "chart-index.db"));
    try {
      const columns = db.pragma("index_info(blocks_chart)") as { name: string }[];
      expect(columns.map((c) => c.name)).toEqual(["sid", "first_ts", "last_ts", "summary"]);
      // The store's scan of summaries (D65) reads that index alone: SQLite names it a covering index.
      const backendStore = new SqliteBlockStore(db);
      const plans = db.prepare(`EXPLAIN QUERY PLAN ${backendStore.summariesSql()}`).all({ sid: 1, from: 0, to: 1, limit: -1 }) as {
        detail: string;
      }[];
      expect(plans.map((p) => p.detail)).toContainEqual(expect.stringMatching(/COVERING INDEX blocks_chart/));
    } finally {
      db.close();
    }
  });

  it("refuses a database from a newer Meridian", () => {
    const path = join(dir, "newer.db");
    const raw = new Database(path);
    raw.pragma("user_version = 999");
    raw.close();
    expect(() => openDatabase(path)).toThrow(/newer/);
  });

  it("a failing migration leaves the database at the previous version", () => {
    const path = join(dir, "fail.db");
    openDatabase(path).close();
    const db = new Database(path);
    const bad = [
      ...MIGRATIONS,
      { version: MIGRATIONS.length + 1, name: "bad", sql: "CREATE TABLE ok_table (x INTEGER); SELECT nope FROM nowhere;" },
    ];
    expect(() => migrate(db, bad)).toThrow();
    expect(schemaVersion(db)).toBe(MIGRATIONS.length);
    expect(db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'ok_table'").get()).toEqual({ n: 0 });
    db.close();
  });
});

describe("native addon", () => {
  it("computes CRC-32C (check value of '123456789' is 0xE3069283)", () => {
    expect(crc32c(new TextEncoder().encode("123456789"))).toBe(0xe3069283);
    expect(crc32c(new Uint8Array(0))).toBe(0);
  });
  it("throws a TypeError, never crashes, on a wrong argument", () => {
    expect(() => crc32c("nope" as unknown as Uint8Array)).toThrow(TypeError);
  });
});
