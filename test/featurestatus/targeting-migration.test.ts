// D61, D62 on a database made before them: the migration gives every stored
// message no audiences, no paths and no translations (for everyone, every
// page, its one language), on both backends; the audit images written before
// are read as such.
import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteMessageStore } from "../../src/sqlite/message-store.js";
import { PostgresMessageStore } from "../../src/postgres/message-store.js";
import { openDatabase } from "../../src/sqlite/database.js";
import { MIGRATIONS } from "../../src/sqlite/schema.js";
import { connectPostgres } from "../../src/postgres/database.js";
import { ChangeFeed } from "../../src/postgres/changes.js";
import { PG_MIGRATIONS, migratePostgres } from "../../src/postgres/schema.js";
import { PG_SKIP_REASON, PG_URL, freshPgDatabase } from "../helpers/postgres.js";

const dir = mkdtempSync(join(tmpdir(), "meridian-targeting-migration-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The migrations before the one that added targeting and translations. */
function before<M extends { name: string }>(all: readonly M[]): M[] {
  return all.slice(
    0,
    all.findIndex((m) => m.name.startsWith("message targeting")),
  );
}

const OLD = { title: "From before", body: "<b>old</b>" };
const UNTARGETED = { audiences: [], paths: [], translations: {} };

describe("D61 D62 migration", () => {
  it("D61 D62 SQLite: a message stored before reads as for everyone, every page, one language", async () => {
    const file = join(dir, "old.db");
    const old = openDatabase(file, before(MIGRATIONS));
    old
      .prepare("INSERT INTO messages (feature_id, type, title, body, start_date, expiring_date) VALUES (NULL, 'Warning', ?, ?, 1, 2)")
      .run(OLD.title, OLD.body);
    old.close();
    const db = openDatabase(file);
    try {
      const store = new SqliteMessageStore(db);
      expect(await store.get(1)).toMatchObject({ ...OLD, ...UNTARGETED, version: 1 });
    } finally {
      db.close();
    }
  });

  it.skipIf(!PG_URL)("D61 D62 PostgreSQL: a message stored before reads as for everyone, every page, one language", async () => {
    const pg = await freshPgDatabase();
    const opts = { url: pg.url, poolSize: 2, statementTimeoutMs: 5000, connectTimeoutS: 5 };
    const sql = connectPostgres(opts);
    const feed = await ChangeFeed.listen(opts);
    try {
      await migratePostgres(sql, before(PG_MIGRATIONS));
      await sql`INSERT INTO messages (feature_id, type, title, body, start_date, expiring_date) VALUES (NULL, 'Warning', ${OLD.title}, ${OLD.body}, 1, 2)`;
      expect(await migratePostgres(sql)).toBeGreaterThanOrEqual(1);
      const store = new PostgresMessageStore(sql, feed);
      const [row] = await store.list({ featureId: null, expiry: "All", sortBy: "StartDate", sortOrder: "Asc", limit: 1, now: 0 });
      expect(row).toMatchObject({ ...OLD, ...UNTARGETED, version: 1 });
    } finally {
      await Promise.all([sql.end(), feed.close()]);
      await pg.drop();
    }
  });
  if (!PG_URL) it.skip(PG_SKIP_REASON, () => {});
});
