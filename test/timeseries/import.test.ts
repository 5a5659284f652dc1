// D30 `meridian import` through the real CLI: header rule, empty cells as
// missing, the summary line, the line of the first bad row with nothing kept,
// and a SIGKILL in the middle of an import that loses no acknowledged write.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BlockStore } from "../../src/storage/block-store.js";
import { openDatabase } from "../../src/storage/database.js";
import { MetadataStore } from "../../src/timeseries/metadata-store.js";
import { RowBuilder, kindsOf } from "../../src/timeseries/value-rows.js";
import { BIN, exited, meridian } from "../helpers/cli.js";
import { storedRows } from "../helpers/timeseries.js";

const dir = mkdtempSync(join(tmpdir(), "meridian-import-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const DATASET = "aaaaaaaa-0000-0000-0000-000000000001";
const FIELDS = [
  { name: "value", dataType: "Single" },
  { name: "flag", dataType: "Flag" },
];

let n = 0;
function setup(): { db: string; series: string } {
  const db = join(dir, `i${++n}.db`);
  const series = `bbbbbbbb-0000-0000-0000-00000000000${n}`;
  const conn = openDatabase(db);
  const meta = new MetadataStore(conn);
  meta.createDataset({ id: DATASET, project: "p", items: [], properties: [], metadata: {} });
  meta.createSeries({ id: series, datasetId: DATASET, item: {}, properties: {}, dataFields: FIELDS });
  conn.close();
  return { db, series };
}

const iso = (t: number) => new Date(t * 1000).toISOString().slice(0, 19);

describe("D30 meridian import", () => {
  it("D30 skips a header line, reads empty cells as missing, prints one summary line on stdout", () => {
    const { db, series } = setup();
    const file = join(dir, "ok.csv");
    writeFileSync(file, "time,value,flag\r\n2000-01-01T00:00:00,12.289,0\r\n2000-01-01T00:01:00Z,,2\n2000-01-01T00:02:00,12.5,\n");
    const r = meridian(["import", "--dataset", DATASET.toUpperCase(), "--series", series, file], { MERIDIAN_DB: db });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^imported 3 rows into time series ${series} in [0-9.]+ s \\([0-9]+ rows/s\\)\\n$`));
    const conn = openDatabase(db);
    expect(storedRows(conn, series)).toEqual([
      [946684800, Math.fround(12.289), 0],
      [946684860, null, 2],
      [946684920, 12.5, null],
    ]);
    conn.close();
  });

  it("D30 names the line of the first bad row and keeps nothing of the file", () => {
    const { db, series } = setup();
    const file = join(dir, "bad.csv");
    const lines = Array.from({ length: 40_000 }, (_, i) => `${iso(946684800 + 60 * i)},${i % 100},0`);
    lines[39_000] = "2000-01-01T00:00:00,not-a-number,0";
    writeFileSync(file, lines.join("\n") + "\n");
    const r = meridian(["import", "--dataset", DATASET, "--series", series, file], { MERIDIAN_DB: db });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/line 39001: column 2 must be a finite number; nothing was imported/);
    expect(r.stdout).toBe("");
    const conn = openDatabase(db);
    expect(storedRows(conn, series)).toEqual([]);
    conn.close();
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
    expect(meridian(["import", "--dataset", DATASET, "--series", "cccccccc-0000-0000-0000-000000000000", file], { MERIDIAN_DB: db }).status).toBe(1);
  });

  it("D30 SIGKILL in the middle of an import: the database is consistent, acknowledged writes are all there, the import is not", async () => {
    const { db, series } = setup();
    // An acknowledged write before the import.
    const conn = openDatabase(db);
    const s = new MetadataStore(conn).getSeries(DATASET, series)!;
    const acked = new RowBuilder(kindsOf(FIELDS));
    for (let i = 0; i < 20_000; i++) acked.set(acked.push(-1_000_000 + i), 0, i);
    new BlockStore(conn).upsert(s.sid, kindsOf(FIELDS), acked.take());
    const before = storedRows(conn, series);
    conn.close();

    const file = join(dir, "big.csv");
    const rows = 3_000_000;
    const parts: string[] = [];
    for (let i = 0; i < rows; i++) parts.push(`${iso(946684800 + 60 * i)},${(i % 5000) / 1000},${i % 4}`);
    writeFileSync(file, parts.join("\n"));
    const child = spawn(process.execPath, [BIN, "import", "--dataset", DATASET, "--series", series, file], { env: { ...process.env, MERIDIAN_DB: db }, stdio: "ignore" });
    await new Promise((r) => setTimeout(r, 450)); // start-up is ~150 ms, the import itself about a second
    child.kill("SIGKILL");
    const code = await exited(child);

    const after = openDatabase(db);
    try {
      expect(after.pragma("integrity_check", { simple: true })).toBe("ok");
      const got = storedRows(after, series);
      expect(code).toBeNull(); // killed by the signal, mid-import
      expect(got).toEqual(before); // none of the import, and every acknowledged row
      // The database takes writes again: the dead importer left no lock behind.
      new BlockStore(after).upsert(s.sid, kindsOf(FIELDS), new RowBuilder(kindsOf(FIELDS)).take());
      const more = new RowBuilder(kindsOf(FIELDS));
      more.push(0);
      expect(new BlockStore(after).upsert(s.sid, kindsOf(FIELDS), more.take())).toBe(1);
    } finally {
      after.close();
    }
  }, 60_000);
});
