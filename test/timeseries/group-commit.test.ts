// D66 group commit: concurrent writes share one transaction and one commit;
// a write that fails validation fails alone, and one that fails inside a
// group is rolled back alone while its companions commit. Through a real
// server on the suite's backend, and each backend's group commit on a real
// database.
import { fsync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/sqlite/database.js";
import { groupCommit } from "../../src/sqlite/group-commit.js";
import { WalSync } from "../../src/sqlite/wal-sync.js";
import { pgGroupCommit } from "../../src/postgres/group-commit.js";
import { connectPostgres } from "../../src/postgres/database.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { TS_RW, tsApi } from "../helpers/timeseries.js";
import { PG_SKIP_REASON, PG_URL, freshPgDatabase } from "../helpers/postgres.js";

let server: TestServer;
let api: ReturnType<typeof tsApi>;
let dataset: string;

beforeAll(async () => {
  server = await startTestServer();
  api = tsApi(server, await server.key(TS_RW));
  dataset = await api.dataset();
});
afterAll(() => server.close());

/** The commit group histogram's count (commits) and sum (writes) from /metrics. */
async function groups(): Promise<{ commits: number; writes: number }> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1] ?? 0);
  return { commits: value("meridian_commit_group_writes_count"), writes: value("meridian_commit_group_writes_sum") };
}

const iso = (i: number) => new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString().slice(0, 19);

describe("D66 group commit through the server", () => {
  it("D66 concurrent uploads share commits, and every acknowledged row is stored", async () => {
    const series = await Promise.all([0, 1, 2, 3].map(() => api.series(dataset)));
    const before = await groups();
    const uploads = Array.from({ length: 48 }, (_, i) =>
      api.call("POST", `/api/ts/dataset/${dataset}/timeseries/${series[i % 4]}/values`, { data: [[iso(i), i, 0]] }),
    );
    const answers = await Promise.all(uploads);
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    const after = await groups();
    // The server's own writes (the clock's message events) may go through the group commit meanwhile too.
    const writes = after.writes - before.writes;
    expect(writes).toBeGreaterThanOrEqual(48);
    expect(after.commits - before.commits).toBeLessThan(writes); // some writes shared a commit
    for (const [s, id] of series.entries()) {
      const r = await api.read(dataset, id);
      expect(r.json.data.map((row: unknown[]) => row[1])).toEqual(Array.from({ length: 12 }, (_, k) => s + 4 * k));
    }
  });

  it("D66 a write that fails validation fails alone; its companions are stored", async () => {
    const series = await Promise.all([0, 1, 2].map(() => api.series(dataset)));
    const bodies = [
      { data: [[iso(1), 1, 0]] },
      {
        data: [
          [iso(2), 2, 0],
          ["not a time", 3, 0],
        ],
      },
      { data: [[iso(3), 3, 0]] },
    ];
    const answers = await Promise.all(
      bodies.map((body, i) => api.call("POST", `/api/ts/dataset/${dataset}/timeseries/${series[i]}/values`, body)),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 400, 200]);
    expect((await api.read(dataset, series[0])).json.data).toHaveLength(1);
    expect((await api.read(dataset, series[1])).json.data).toHaveLength(0); // nothing of it
    expect((await api.read(dataset, series[2])).json.data).toHaveLength(1);
  });
});

describe("D66 a write failing inside a group (SQLite)", () => {
  const dir = mkdtempSync(join(tmpdir(), "meridian-group-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("D66 the failing write is rolled back alone; its companions commit in the same transaction", async () => {
    const db = openDatabase(join(dir, "g.db"));
    db.exec("CREATE TABLE t (n INTEGER NOT NULL)");
    const insert = db.prepare("INSERT INTO t (n) VALUES (?)");
    const commits: number[] = [];
    const group = groupCommit(db);
    group.onGroup = (n) => commits.push(n);
    const results = await Promise.allSettled([
      group.run(() => insert.run(1).changes),
      group.run(() => {
        insert.run(2); // written, then undone with its savepoint
        throw new Error("fails after a statement");
      }),
      group.run(() => insert.run(3).changes),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(commits).toEqual([3]); // one commit for the three
    expect(db.prepare("SELECT n FROM t ORDER BY n").pluck().all()).toEqual([1, 3]);
    db.close();
  });

  it("D66 a commit that cannot start fails every write of its group, and none is stored", async () => {
    const db = openDatabase(join(dir, "h.db"));
    db.exec("CREATE TABLE t (n INTEGER NOT NULL)");
    db.pragma("busy_timeout = 0");
    const other = openDatabase(join(dir, "h.db"));
    other.exec("BEGIN IMMEDIATE"); // another process holds the write lock
    const group = groupCommit(db);
    const results = await Promise.allSettled([1, 2].map((n) => group.run(() => db.prepare("INSERT INTO t (n) VALUES (?)").run(n))));
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect(String((results[0] as PromiseRejectedResult).reason)).toMatch(/locked|busy/i);
    other.exec("ROLLBACK");
    expect(db.prepare("SELECT count(*) FROM t").pluck().get()).toBe(0);
    other.close();
    db.close();
  });
});

describe.skipIf(!PG_URL)("D66 a write failing inside a group (PostgreSQL)", () => {
  it.skipIf(!PG_URL)(
    PG_URL ? "D66 the failing write is rolled back alone; its companions commit in the same transaction" : PG_SKIP_REASON,
    async () => {
      const pg = await freshPgDatabase();
      const sql = connectPostgres({ url: pg.url, poolSize: 4, statementTimeoutMs: 10_000, connectTimeoutS: 5 });
      try {
        await sql`CREATE TABLE t (n integer NOT NULL)`;
        const group = pgGroupCommit(sql);
        const commits: number[] = [];
        group.onGroup = (n) => commits.push(n);
        // All of one key: one lane, so the four after the first wait for it and go as one group.
        const results = await Promise.allSettled(
          [1, 2, 3, 4, 5].map((n) =>
            group.run(7, async (tx) => {
              await tx`INSERT INTO t (n) VALUES (${n})`;
              if (n === 3) throw new Error("fails after a statement");
              return n;
            }),
          ),
        );
        expect(results.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled", "fulfilled"]);
        expect(commits).toEqual([1, 4]);
        expect((await sql`SELECT n FROM t ORDER BY n`).map((r) => r.n)).toEqual([1, 2, 4, 5]);
      } finally {
        await sql.end();
        await pg.drop();
      }
    },
  );
});

describe.skipIf(!PG_URL)("D66 message writes keep a lane of their own (PostgreSQL)", () => {
  it.skipIf(!PG_URL)(
    PG_URL ? "D66 a message write commits while a group of value writes in any lane is still running" : PG_SKIP_REASON,
    async () => {
      const pg = await freshPgDatabase();
      const sql = connectPostgres({ url: pg.url, poolSize: 8, statementTimeoutMs: 10_000, connectTimeoutS: 5 });
      let release = () => {};
      const held = new Promise<void>((r) => (release = r));
      try {
        await sql`CREATE TABLE t (n integer NOT NULL)`;
        const group = pgGroupCommit(sql);
        // Every value lane busy with a write that waits until released (sids 0..3 cover the four lanes).
        const values = [0, 1, 2, 3].map((sid) =>
          group.run(sid, async (tx) => {
            await tx`INSERT INTO t (n) VALUES (${sid})`;
            await held;
          }),
        );
        const message = group.run("messages", async (tx) => (await tx`INSERT INTO t (n) VALUES (100) RETURNING n`)[0].n as number);
        const first = await Promise.race([message, new Promise((r) => setTimeout(() => r("timed out"), 5_000))]);
        expect(first).toBe(100);
        release();
        await Promise.all(values);
        expect((await sql`SELECT n FROM t ORDER BY n`).map((r) => r.n)).toEqual([0, 1, 2, 3, 100]);
      } finally {
        release();
        await sql.end();
        await pg.drop();
      }
    },
  );
});

describe("D66 answers wait for the disk (SQLite's WAL synced off the event loop)", () => {
  const dir = mkdtempSync(join(tmpdir(), "meridian-walsync-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** A connection as the server serves it (synchronous=NORMAL), its WalSync with an fsync the test releases by hand. */
  function serving(name: string) {
    const db = openDatabase(join(dir, name));
    db.exec("CREATE TABLE t (n INTEGER NOT NULL)");
    db.pragma("synchronous = NORMAL");
    const syncs: { release: () => void; started: number }[] = [];
    const count = () => db.prepare("SELECT count(*) FROM t").pluck().get() as number;
    const wal = new WalSync(db, `${db.name}-wal`, (fd, done) => syncs.push({ started: count(), release: () => fsync(fd, done) }));
    return { db, wal, syncs, insert: (n: number) => db.prepare("INSERT INTO t (n) VALUES (?)").run(n) };
  }
  const settled = (p: Promise<unknown>) => Promise.race([p.then(() => true), new Promise((r) => setTimeout(() => r(false), 50))]);

  const turn = () => new Promise((r) => setImmediate(r));

  it("D66 a write is acknowledged only after an fsync that began after its commit; the next begins without waiting for it", async () => {
    const { db, wal, syncs, insert } = serving("a.db");
    insert(1);
    const first = wal.durable();
    await turn();
    expect(syncs.map((s) => s.started)).toEqual([1]); // an fsync began, covering the first commit
    insert(2); // committed while that fsync runs: not covered by it
    const second = wal.durable();
    await turn();
    expect(syncs.map((s) => s.started)).toEqual([1, 2]); // its own began at once, the first still running
    expect(await settled(second)).toBe(false);
    syncs[0].release();
    expect(await settled(first)).toBe(true);
    expect(await settled(second)).toBe(false); // the first fsync began before its commit
    syncs[1].release();
    expect(await settled(second)).toBe(true);
    wal.close();
    db.close();
  });

  it("D66 commits answered in one turn share one fsync; a call that wrote nothing waits for none", async () => {
    const { db, wal, syncs, insert } = serving("b.db");
    const answers = [1, 2, 3].map((n) => (insert(n), wal.durable()));
    await turn();
    expect(syncs.map((s) => s.started)).toEqual([3]); // one fsync for the three, begun after the last
    syncs[0].release();
    await Promise.all(answers);
    expect(await settled(wal.durable())).toBe(true); // nothing new: no fsync
    expect(syncs).toHaveLength(1);
    wal.close();
    db.close();
  });
});

describe("D66 a write inside the caller's own transaction", () => {
  const dir = mkdtempSync(join(tmpdir(), "meridian-group-in-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("D66 runs at once, as part of that transaction, not in a later group", () => {
    const db = openDatabase(join(dir, "i.db"));
    db.exec("CREATE TABLE t (n INTEGER NOT NULL)");
    const group = groupCommit(db);
    db.transaction(() => {
      void group.run(() => db.prepare("INSERT INTO t (n) VALUES (1)").run());
      expect(db.prepare("SELECT count(*) FROM t").pluck().get()).toBe(1); // written already, inside
    })();
    db.close(); // nothing left waiting for a connection that is gone
  });
});
