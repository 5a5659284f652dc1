// D69 `meridian import` of Arrow and Parquet files through the real CLI, on
// the backend the suite runs: by magic bytes or extension, staged and
// published all or nothing as a CSV import is (import.test.ts).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Table, makeData, makeVector, tableToIPC, Timestamp, TimeUnit, Float32, vectorFromArray } from "apache-arrow";
import { Table as WasmTable, writeParquet } from "parquet-wasm";
import { meridian } from "../helpers/cli.js";
import { dropDatabases, freshDatabase, withBackend } from "../helpers/databases.js";
import { storedRowsIn } from "../helpers/timeseries.js";

const dir = mkdtempSync(join(tmpdir(), "meridian-import-columnar-"));
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
async function setup(): Promise<{ db: string; series: string }> {
  const db = await freshDatabase(dir);
  const series = `bbbbbbbb-0000-0000-0000-00000000000${++n}`;
  await withBackend(db, async ({ metadata }) => {
    await metadata.createDataset({ id: DATASET, project: "p", items: [], properties: [], metadata: {} });
    await metadata.createSeries({ id: series, datasetId: DATASET, item: {}, properties: {}, dataFields: FIELDS });
  });
  return { db, series };
}
const rowsIn = (db: string, series: string) => withBackend(db, (b) => storedRowsIn(b, DATASET, series));

/** n rows a minute apart from 2000-01-01 as an Arrow stream: value i % 100, flag i % 4, every 10th value missing. */
function arrowRows(count: number, bad?: number): Uint8Array {
  const ts = BigInt64Array.from({ length: count }, (_, i) => BigInt(946684800 + 60 * i) * 1000n);
  const value = Array.from({ length: count }, (_, i) => (i === bad ? NaN : i % 10 === 9 ? null : i % 100));
  return tableToIPC(
    new Table({
      timestamp: makeVector(makeData({ type: new Timestamp(TimeUnit.MILLISECOND, "UTC"), length: count, data: ts })),
      value: vectorFromArray(value, new Float32()),
      flag: makeVector(Int32Array.from({ length: count }, (_, i) => i % 4)),
    }),
    "stream",
  );
}
const expected = (count: number) => Array.from({ length: count }, (_, i) => [946684800 + 60 * i, i % 10 === 9 ? null : i % 100, i % 4]);

describe("D69 meridian import of Arrow and Parquet", () => {
  it("D69 imports an .arrow file and a Parquet file (found by its magic bytes, whatever its name), all rows, in one summary", async () => {
    const { db, series } = await setup();
    const arrow = join(dir, "rows.arrow");
    writeFileSync(arrow, arrowRows(300_000));
    const r = meridian(["import", "--dataset", DATASET, "--series", series, arrow], { MERIDIAN_DB: db });
    expect(r.stderr).not.toContain("nothing");
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^imported into time series ${series}: 300000 rows read, 300000 stored`));
    expect(await rowsIn(db, series)).toEqual(expected(300_000));

    const other = await setup();
    const parquet = join(dir, "rows.dat");
    writeFileSync(parquet, writeParquet(WasmTable.fromIPCStream(arrowRows(1000))));
    const p = meridian(["import", "--dataset", DATASET, "--series", other.series, parquet], { MERIDIAN_DB: other.db });
    expect(p.status).toBe(0);
    expect(await rowsIn(other.db, other.series)).toEqual(expected(1000));
  });

  it("D69 a bad value deep in an Arrow file names column and row, and nothing of the file is kept", async () => {
    const { db, series } = await setup();
    const file = join(dir, "bad.arrow");
    writeFileSync(file, arrowRows(300_000, 290_000));
    const r = meridian(["import", "--dataset", DATASET, "--series", series, file], { MERIDIAN_DB: db });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/value\[290000\] must be a finite number; nothing was imported/);
    expect(await rowsIn(db, series)).toEqual([]);
  });

  it("D69 a file that is not what its extension says is an error naming it, nothing imported", async () => {
    const { db, series } = await setup();
    const file = join(dir, "garbage.parquet");
    writeFileSync(file, "timestamp,value\n");
    const r = meridian(["import", "--dataset", DATASET, "--series", series, file], { MERIDIAN_DB: db });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/not a Parquet file.*nothing was imported/);
    expect(await rowsIn(db, series)).toEqual([]);
  });
});
