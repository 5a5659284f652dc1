// D51 the server's own writes never checkpoint the WAL (an importer's pages
// would be copied inside a small write, on the event loop); a PASSIVE
// checkpoint on a timer does it between requests (src/sqlite/checkpoint.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Database from "better-sqlite3";
import { statSync } from "node:fs";
import { join } from "node:path";
import { SQLITE_ONLY, startTestServer, type TestServer } from "../helpers/server.js";
import { RW, api, draft } from "../helpers/messages.js";

let server: TestServer;
beforeAll(async () => {
  if (!SQLITE_ONLY) server = await startTestServer();
});
afterAll(() => server?.close());

const file = () => join(server.dir, "meridian.db");

/** Commits about 2,500 pages to the WAL from another connection that never checkpoints, as a long import leaves them. */
function fillWal(): void {
  const other = new Database(file());
  other.pragma("wal_autocheckpoint = 0");
  other.exec("CREATE TABLE IF NOT EXISTS ballast (b BLOB)");
  const insert = other.prepare("INSERT INTO ballast VALUES (randomblob(4000))");
  other.transaction(() => {
    for (let i = 0; i < 2_500; i++) insert.run();
  })();
  other.close();
}

describe.skipIf(SQLITE_ONLY)(`D51 WAL checkpoints${SQLITE_ONLY ? ` (${SQLITE_ONLY})` : ""}`, () => {
  it("D51 a server write that finds the WAL past 1,000 pages does not copy it into the database; the timer does within seconds", async () => {
    const before = statSync(file()).size;
    fillWal();
    const { status } = await api(server, await server.key(RW)).create(null, draft());
    expect(status).toBe(201);
    // SQLite's automatic checkpoint would have run inside that commit and grown the file by ~10 MB.
    expect(statSync(file()).size).toBe(before);
    const deadline = Date.now() + 5_000;
    while (statSync(file()).size === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(statSync(file()).size).toBeGreaterThan(before + 9_000_000);
  });
});
