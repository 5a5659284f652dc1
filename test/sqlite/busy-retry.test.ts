// D51 the server never waits for SQLite's write lock on its event loop: a
// write that meets a lock held by another process (here a second connection
// on the server's file, as `meridian import` would hold it) is retried with
// timers; meanwhile the server answers; past the budget it is a 503 with
// Retry-After, never a 500, and nothing is stored.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Database from "better-sqlite3";
import { join } from "node:path";
import { SQLITE_ONLY, startTestServer, type TestServer } from "../helpers/server.js";
import { RW, api as messageApi, draft } from "../helpers/messages.js";
import { TS_RW, tsApi } from "../helpers/timeseries.js";

let server: TestServer;
beforeAll(async () => {
  if (!SQLITE_ONLY) server = await startTestServer();
});
afterAll(() => server?.close());

/** Takes the write lock from another connection to the server's file for `ms`, as an importer would. */
function holdWriteLock(ms: number): Promise<void> {
  const other = new Database(join(server.dir, "meridian.db"));
  other.exec("BEGIN IMMEDIATE");
  return new Promise((resolve) =>
    setTimeout(() => {
      other.exec("ROLLBACK");
      other.close();
      resolve();
    }, ms),
  );
}

/** /healthz round trips, one after another, until `until` settles; the slowest in ms. */
async function slowestHealthz(until: Promise<unknown>): Promise<{ slowest: number; n: number }> {
  let done = false;
  void until.then(() => (done = true));
  let slowest = 0;
  let n = 0;
  while (!done) {
    const t0 = performance.now();
    expect((await fetch(server.url + "/healthz")).status).toBe(200);
    slowest = Math.max(slowest, performance.now() - t0);
    n++;
    await new Promise((r) => setTimeout(r, 10));
  }
  return { slowest, n };
}

const count = (table: string) => (server.app.db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;

describe.skipIf(SQLITE_ONLY)(`D51 busy database${SQLITE_ONLY ? ` (${SQLITE_ONLY})` : ""}`, () => {
  it("D51 a message write and a value upload that meet a held write lock wait without blocking the event loop, and succeed once it is released", async () => {
    const messages = messageApi(server, await server.key(RW));
    const ts = tsApi(server, await server.key(TS_RW));
    const d = await ts.dataset();
    const s = await ts.series(d);
    const held = holdWriteLock(600);
    const t0 = performance.now();
    const writes = Promise.all([
      messages.create(null, draft({ title: "during a lock" })),
      ts.call("POST", `/api/ts/dataset/${d}/timeseries/${s}/values`, { data: [["2001-01-01T00:00:00", 1.5, 0]] }),
    ]);
    const health = await slowestHealthz(writes);
    const [message, upload] = await writes;
    await held;
    expect([message.status, upload.status, upload.json]).toEqual([201, 200, { count: 1 }]);
    // They went through only after the lock was gone, and the server answered meanwhile.
    expect(performance.now() - t0).toBeGreaterThanOrEqual(550);
    expect(health.n).toBeGreaterThan(5);
    expect(health.slowest).toBeLessThan(300); // before: the event loop stood in SQLite's 5 s busy wait
    expect((await ts.read(d, s)).json).toEqual({ data: [["2001-01-01T00:00:00", 1.5, 0]] });
  });

  it("D51 a write still locked out after the retry budget (10 s) is a 503 problem+json with Retry-After, never a 500, and stores nothing", async () => {
    const messages = messageApi(server, await server.key(RW));
    const before = count("messages");
    const held = holdWriteLock(11_000);
    const r = await messages.create(null, draft({ title: "locked out" }));
    await held;
    expect([r.status, r.headers.get("retry-after"), r.headers.get("content-type"), r.json.code]).toEqual([
      503,
      "1",
      "application/problem+json; charset=utf-8",
      "unavailable",
    ]);
    expect(count("messages")).toBe(before);
    expect(server.logs.some((l) => JSON.stringify(l).includes("database is locked"))).toBe(false);
    expect((await messages.create(null, draft({ title: "after the lock" }))).status).toBe(201);
  }, 30_000);
});
