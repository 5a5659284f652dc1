// D30 `meridian import` through the real CLI, on the backend the suite runs
// on (D40; into PostgreSQL by COPY): header rule, empty cells as missing, the
// summary line, the line of the first bad row with nothing kept, a SIGKILL in
// the middle of an import that loses no acknowledged write, and (D51) a
// server on the same database that keeps answering while an import runs.
// D58: a header only when it names the fields, a summary of rows read,
// stored and replaced, and (SQLite) a file that grows by the blocks alone.
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import Database from "better-sqlite3";
import { RowBuilder, kindsOf } from "../../src/timeseries/value-rows.js";
import { BIN, exited, meridian } from "../helpers/cli.js";
import { countIn, dropDatabases, freshDatabase, shownAs, withBackend } from "../helpers/databases.js";
import { RW, api as messageApi, draft } from "../helpers/messages.js";
import { startTestServer, TEST_BACKEND } from "../helpers/server.js";
import { TS_RW, storedRowsIn, tsApi } from "../helpers/timeseries.js";

const dir = mkdtempSync(join(tmpdir(), "meridian-import-"));
afterAll(async () => {
  await dropDatabases();
  rmSync(dir, { recursive: true, force: true });
});
const DATASET = "aaaaaaaa-0000-0000-0000-000000000001";
const FIELDS = [
  { name: "value", dataType: "Single" },
  { name: "flag", dataType: "Flag" },
];

let n = 0;
/** A database with one dataset and one series of FIELDS, and `rows` stored in it first when given. */
async function setup(rows?: RowBuilder): Promise<{ db: string; series: string }> {
  const db = await freshDatabase(dir);
  const series = `bbbbbbbb-0000-0000-0000-00000000000${++n}`;
  await withBackend(db, async ({ metadata, blocks }) => {
    await metadata.createDataset({ id: DATASET, project: "p", items: [], properties: [], metadata: {} });
    const s = (await metadata.createSeries({ id: series, datasetId: DATASET, item: {}, properties: {}, dataFields: FIELDS }))!;
    if (rows) await blocks.upsert(s.sid, kindsOf(FIELDS), rows.take());
  });
  return { db, series };
}

const rowsIn = (db: string, series: string) => withBackend(db, (b) => storedRowsIn(b, DATASET, series));

const iso = (t: number) => new Date(t * 1000).toISOString().slice(0, 19);

/** The summary line of a successful import (D58), timing aside. */
const summaryOf = (
  series: string,
  read: number,
  stored: number,
  inFile: number,
  replaced: number,
  s = (n: number) => (n === 1 ? "" : "s"),
) =>
  new RegExp(
    `^imported into time series ${series}: ${read} row${s(read)} read, ${stored} stored, ${inFile} duplicate${s(inFile)} replaced by a later line, ` +
      `${replaced} stored row${s(replaced)} replaced in [0-9.]+ s \\([0-9]+ rows/s\\)\\n$`,
  );

const isSqlite = (db: string) => !db.includes("://");

/** SQLite: an import's staging files beside the database (D58). */
const stagingFiles = (db: string) =>
  readdirSync(dirname(db))
    .filter((f) => f.startsWith(`${basename(db)}-import-`))
    .map((f) => join(dirname(db), f));

/** Blocks an import has staged so far: PostgreSQL's import_blocks, or SQLite's staging file. */
async function stagedBlocks(db: string): Promise<number> {
  if (!isSqlite(db)) return countIn(db, "import_blocks");
  let n = 0;
  for (const f of stagingFiles(db)) {
    try {
      n += await countIn(f, "import_blocks");
    } catch {
      // not made yet
    }
  }
  return n;
}

/** A CSV of n rows every minute from 2000-01-01: timestamp, value, flag. */
function bigCsv(name: string, n: number): string {
  const file = join(dir, name);
  const parts: string[] = [];
  for (let i = 0; i < n; i++) parts.push(`${iso(946684800 + 60 * i)},${(i % 5000) / 1000},${i % 4}`);
  writeFileSync(file, parts.join("\n"));
  return file;
}

describe("D30 meridian import", () => {
  it("D30 skips a header line, reads empty cells as missing, prints one summary line on stdout", async () => {
    const { db, series } = await setup();
    const file = join(dir, "ok.csv");
    writeFileSync(file, "time,value,flag\r\n2000-01-01T00:00:00,12.289,0\r\n2000-01-01T00:01:00Z,,2\n2000-01-01T00:02:00,12.5,\n");
    const r = meridian(["import", "--dataset", DATASET.toUpperCase(), "--series", series, file], { MERIDIAN_DB: db });
    expect(r.stderr).toBe(`meridian import: database ${shownAs(db)}\n`); // D33 the database is named, nothing else
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(summaryOf(series, 3, 3, 0, 0));
    expect(await rowsIn(db, series)).toEqual([
      [946684800, Math.fround(12.289), 0],
      [946684860, null, 2],
      [946684920, 12.5, null],
    ]);
  });

  it("D30 names the line of the first bad row and keeps nothing of the file", async () => {
    const { db, series } = await setup();
    const file = join(dir, "bad.csv");
    const lines = Array.from({ length: 40_000 }, (_, i) => `${iso(946684800 + 60 * i)},${i % 100},0`);
    lines[39_000] = "2000-01-01T00:00:00,not-a-number,0";
    writeFileSync(file, lines.join("\n") + "\n");
    const r = meridian(["import", "--dataset", DATASET, "--series", series, file], { MERIDIAN_DB: db });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/line 39001: column 2 must be a finite number; nothing was imported/);
    expect(r.stdout).toBe("");
    expect(await rowsIn(db, series)).toEqual([]);
    for (const [content, line] of [
      ["2000-01-01T00:00:00,1,0\n2000-01-01T00:01:00,1\n", 2],
      ["2000-01-01T00:00:00,1,0\n2000-02-30T00:00:00,1,0\n", 2],
      ["2000-01-01T00:00:00,1,0\n2000-01-01T00:01:00,1,0.5\n", 2],
      ["2000-01-01T00:00:00,1,0\n2000-01-01T00:01:00,1,0,7\n", 2],
    ] as const) {
      writeFileSync(file, content);
      const bad = meridian(["import", "--dataset", DATASET, "--series", series, file], { MERIDIAN_DB: db });
      expect(bad.stderr, content).toMatch(new RegExp(`line ${line}:`));
    }
    expect(
      meridian(["import", "--dataset", DATASET, "--series", "cccccccc-0000-0000-0000-000000000000", file], { MERIDIAN_DB: db }).status,
    ).toBe(1);
  });

  it("D58 a first line is a header only when it names the fields; any other line that is not a row is an error naming it", async () => {
    const { db, series } = await setup();
    const file = join(dir, "header.csv");
    const rows = "2000-01-01T00:00:00,1,0\n2000-01-01T00:01:00,2,1\n";
    // Headers: any name for the timestamp, then the fields in order; case, spaces, quotes and a UTF-8 BOM do not matter.
    for (const header of ["timestamp,value,flag", '\uFEFFTime , VALUE,"Flag"', '"Date (UTC)","value","flag"']) {
      writeFileSync(file, `${header}\r\n${rows}`);
      const r = meridian(["import", "--dataset", DATASET, "--series", series, file], { MERIDIAN_DB: db });
      expect([r.status, r.stdout], header).toEqual([
        0,
        expect.stringMatching(summaryOf(series, 2, 2, 0, 2 * Number(header !== "timestamp,value,flag"))),
      ]);
    }
    await withBackend(db, async ({ metadata, blocks }) => {
      const s = (await metadata.getSeries(DATASET, series))!;
      await blocks.deleteRange(s.sid, kindsOf(FIELDS), -1e12, 1e12);
    });
    for (const [content, why] of [
      ["2000-01-01T00:00:0,1,0\n2000-01-01T00:01:00,2,0\n2000-01-01T00:02:00,3,0\n", "a malformed first row"], // was taken as a header: "imported 2 rows"
      ["2000-01-01 00:00:00;1;0\n", "a one-line file in another format"], // was "imported 0 rows", exit 0
      ["time,value\n" + rows, "a header without every field"],
      ["time,flag,value\n" + rows, "the fields in another order"],
      ["1,value,flag\n" + rows, "a timestamp column named by a number"],
    ] as const) {
      writeFileSync(file, content);
      const r = meridian(["import", "--dataset", DATASET, "--series", series, file], { MERIDIAN_DB: db });
      expect([r.status, r.stdout], why).toEqual([1, ""]);
      expect(r.stderr, why).toMatch(
        /line 1: .*nor is it a header \(a header names the timestamp column, then value, flag\); nothing was imported\n$/,
      );
    }
    // A second line like a header is an error too: only the first may be one.
    writeFileSync(file, `time,value,flag\n${rows}time,value,flag\n`);
    expect(meridian(["import", "--dataset", DATASET, "--series", series, file], { MERIDIAN_DB: db }).stderr).toMatch(
      /line 4: the timestamp must read/,
    );
    expect(await rowsIn(db, series)).toEqual([]);
  }, 120_000); // nine CLI runs

  it("D58 the summary says rows read, rows stored and duplicates replaced, in the file and among stored rows", async () => {
    const stored = new RowBuilder(kindsOf(FIELDS));
    stored.set(stored.push(946684860), 0, 7);
    const { db, series } = await setup(stored);
    const file = join(dir, "duplicates.csv");
    // Three rows, two with one timestamp (the later line wins); one of the two timestamps was stored.
    writeFileSync(file, "2000-01-01T00:00:00,1,0\n2000-01-01T00:01:00,2,0\n2000-01-01T00:00:00,3,1\n");
    const r = meridian(["import", "--dataset", DATASET, "--series", series, file], { MERIDIAN_DB: db });
    expect([r.status, r.stdout]).toEqual([0, expect.stringMatching(summaryOf(series, 3, 2, 1, 1))]);
    expect(await rowsIn(db, series)).toEqual([
      [946684800, 3, 1],
      [946684860, 2, 0],
    ]);
    // A header-only file stores nothing, and says so.
    writeFileSync(file, "time,value,flag\n");
    expect(meridian(["import", "--dataset", DATASET, "--series", series, file], { MERIDIAN_DB: db }).stdout).toMatch(
      summaryOf(series, 0, 0, 0, 0),
    );
  }, 60_000);

  it.skipIf(TEST_BACKEND !== "sqlite")(
    "D58 an import gives back its staging's space: the SQLite file grows by the blocks' own pages, within 10 %",
    async () => {
      const { db, series } = await setup();
      const before = statSync(db).size;
      const rows = 1_000_000;
      const r = meridian(["import", "--dataset", DATASET, "--series", series, bigCsv("disk.csv", rows)], { MERIDIAN_DB: db });
      expect([r.status, r.stdout]).toEqual([0, expect.stringMatching(summaryOf(series, rows, rows, 0, 0))]);
      const conn = new Database(db, { readonly: true });
      try {
        // The blocks' own size: the pages of their table and index, as SQLite lays them out.
        const own = conn.prepare("SELECT sum(pgsize) FROM dbstat WHERE name IN ('blocks', 'blocks_by_time')").pluck().get() as number;
        const free = (conn.pragma("freelist_count", { simple: true }) as number) * (conn.pragma("page_size", { simple: true }) as number);
        const grown = statSync(db).size - before;
        console.info(
          `D58 ${rows} rows: file +${(grown / rows).toFixed(3)} B/row, blocks' own ${(own / rows).toFixed(3)} B/row, free ${free} B`,
        );
        expect(grown / own).toBeLessThan(1.1); // before: 2.1 (the staged copy's pages left free)
        expect(free).toBeLessThan(0.1 * own);
      } finally {
        conn.close();
      }
      expect(stagingFiles(db)).toEqual([]);
    },
    60_000,
  );

  it("D30 an import over stored rows upserts like an upload: its rows win, rows it does not name stay, in any line order", async () => {
    const stored = new RowBuilder(kindsOf(FIELDS));
    for (let i = 0; i < 50_000; i++) stored.set(stored.push(946684800 + 60 * i), 0, 1);
    const { db, series } = await setup(stored);
    // Every third row of the stored range and 30,000 past its end, written backwards.
    const lines: string[] = [];
    for (let i = 0; i < 80_000; i++) if (i >= 50_000 || i % 3 === 0) lines.push(`${iso(946684800 + 60 * i)},2,${i % 5}`);
    const file = join(dir, "over.csv");
    writeFileSync(file, lines.reverse().join("\n"));
    const r = meridian(["import", "--dataset", DATASET, "--series", series, file], { MERIDIAN_DB: db });
    expect([r.status, r.stderr]).toEqual([0, `meridian import: database ${shownAs(db)}\n`]);
    const expected = Array.from({ length: 80_000 }, (_, i) =>
      i >= 50_000 || i % 3 === 0 ? [946684800 + 60 * i, 2, i % 5] : [946684800 + 60 * i, 1, null],
    );
    expect(await rowsIn(db, series)).toEqual(expected);
    expect([await countIn(db, "imports"), await stagedBlocks(db)]).toEqual([0, 0]);
    if (isSqlite(db)) expect(stagingFiles(db)).toEqual([]);
  }, 60_000);

  it("D30 SIGKILL in the middle of an import: the database is consistent, acknowledged writes are all there, the import is not", async () => {
    // An acknowledged write before the import.
    const acked = new RowBuilder(kindsOf(FIELDS));
    for (let i = 0; i < 20_000; i++) acked.set(acked.push(-1_000_000 + i), 0, i);
    const { db, series } = await setup(acked);
    const before = await rowsIn(db, series);
    expect(before).toHaveLength(20_000);

    const file = bigCsv("big.csv", 3_000_000);
    const child = spawn(process.execPath, [BIN, "import", "--dataset", DATASET, "--series", series, file], {
      env: { ...process.env, MERIDIAN_DB: db },
      stdio: "ignore",
    });
    await new Promise((r) => setTimeout(r, 450)); // start-up is ~150 ms, the import itself about a second
    child.kill("SIGKILL");
    const code = await exited(child);

    if (!db.includes("://")) {
      const conn = new Database(db, { readonly: true });
      expect(conn.pragma("integrity_check", { simple: true })).toBe("ok");
      conn.close();
    }
    expect(code).toBeNull(); // killed by the signal, mid-import
    expect(await rowsIn(db, series)).toEqual(before); // none of the import, and every acknowledged row
    // The database takes writes again: the dead importer left no lock behind.
    await withBackend(db, async ({ metadata, blocks }) => {
      const s = (await metadata.getSeries(DATASET, series))!;
      const more = new RowBuilder(kindsOf(FIELDS));
      more.push(0);
      expect(await blocks.upsert(s.sid, kindsOf(FIELDS), more.take())).toBe(1);
    });
  }, 60_000);

  it("D30 D51 SIGKILL while staging: the series is untouched, the staged blocks are invisible, and the next start removes them", async () => {
    const { db, series } = await setup();
    const file = bigCsv("staging.csv", 3_000_000);
    const child = spawn(process.execPath, [BIN, "import", "--dataset", DATASET, "--series", series, file], {
      env: { ...process.env, MERIDIAN_DB: db },
      stdio: "ignore",
    });
    // Kill it once some batches are staged, before it can publish.
    while ((await stagedBlocks(db)) < 16 && child.exitCode === null) await new Promise((r) => setTimeout(r, 5));
    child.kill("SIGKILL");
    expect(await exited(child)).toBeNull();
    expect(await stagedBlocks(db)).toBeGreaterThanOrEqual(16);
    expect(await countIn(db, "blocks")).toBe(0);
    expect(await countIn(db, "imports")).toBe(1);

    const server = await startTestServer({ MERIDIAN_DB: db }); // the next start
    try {
      expect([await stagedBlocks(db), await countIn(db, "imports")]).toEqual([0, 0]);
      if (isSqlite(db)) expect(stagingFiles(db)).toEqual([]); // D58 the staging file is gone with its import
      const r = await tsApi(server, await server.key({ scopes: ["platform_timeseries_read"], projects: ["p"] }), "p").read(DATASET, series);
      expect(r).toEqual({ status: 200, json: { data: [] } });
    } finally {
      await server.close();
    }
  }, 60_000);
});

describe("D51 the server while an import runs", () => {
  it("D51 value uploads and message writes are answered during an import: no 5xx, no 'database is locked', the import complete", async () => {
    const server = await startTestServer();
    try {
      const ts = tsApi(server, await server.key(TS_RW));
      const messages = messageApi(server, await server.key(RW));
      const d = await ts.dataset();
      const [imported, uploaded] = [await ts.series(d), await ts.series(d)];
      const rows = 3_000_000;
      const file = bigCsv("concurrent.csv", rows);
      const child = spawn(process.execPath, [BIN, "import", "--dataset", d, "--series", imported, file], {
        env: { ...process.env, MERIDIAN_DB: server.db },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      child.stdout.on("data", (c: Buffer) => (out += c.toString()));
      child.stderr.on("data", (c: Buffer) => (out += c.toString()));
      const done = exited(child);
      let running = true;
      void done.then(() => (running = false));
      const statuses: number[] = [];
      let t = 978307200; // 2001-01-01, rows of the other series
      const writes = (async () => {
        while (running) {
          const [m, u] = await Promise.all([
            messages.create(null, draft({ title: `during import ${t}` })),
            ts.call("POST", `/api/ts/dataset/${d}/timeseries/${uploaded}/values`, { data: [[iso((t += 60)), 1.5, 0]] }),
          ]);
          statuses.push(m.status, u.status);
        }
      })();
      // The event loop's responsiveness meanwhile: /healthz, one after another.
      let slowestHealthz = 0;
      while (running) {
        const t0 = performance.now();
        expect((await fetch(server.url + "/healthz")).status).toBe(200);
        slowestHealthz = Math.max(slowestHealthz, performance.now() - t0);
        await new Promise((r) => setTimeout(r, 5));
      }
      await writes;
      expect([await done, out]).toEqual([
        0,
        expect.stringMatching(
          new RegExp(`^meridian import: database .*\nimported into time series ${imported}: ${rows} rows read, ${rows} stored`),
        ),
      ]);
      expect(statuses.length).toBeGreaterThanOrEqual(10);
      expect(statuses.filter((s) => s !== 200 && s !== 201)).toEqual([]);
      expect(slowestHealthz).toBeLessThan(1000); // generous; before: as long as the import (seconds), in SQLite's busy wait
      expect(server.logs.filter((l) => JSON.stringify(l).includes("database is locked"))).toEqual([]);
      expect(
        await server.query("SELECT sum(rows) AS n FROM blocks JOIN time_series USING (sid) WHERE time_series.id = $1", imported),
      ).toEqual([{ n: rows }]);
      expect((await ts.read(d, uploaded)).json.data.length).toBe(statuses.length / 2);
    } finally {
      await server.close();
    }
  }, 120_000);
});
