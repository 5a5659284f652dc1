// W1 series of the given sizes in a new Meridian database, written through
// the storage modules (the import path is measured by bench/codec), and a
// read key: what bench/values and bench/chart read.
import { randomUUID } from "node:crypto";
import { openDatabase } from "../dist/sqlite/database.js";
import { SqliteApiKeyStore } from "../dist/sqlite/api-key-store.js";
import { SqliteMetadataStore as MetadataStore } from "../dist/sqlite/metadata-store.js";
import { SqliteBlockStore } from "../dist/sqlite/block-store.js";
import { BLOCK_ROWS, FieldKind } from "../dist/timeseries/blocks/block-codec.js";
import { W1_FIELDS, columns } from "./w1.js";

export const PROJECT = "bench";

/** Seeds dbPath; returns the dataset, the series id of each size, and an API key that may read them. */
export function seedW1(dbPath, sizes) {
  const db = openDatabase(dbPath);
  const metadata = new MetadataStore(db);
  const blocks = new SqliteBlockStore(db);
  const datasetId = randomUUID();
  const series = new Map(); // rows -> series id
  metadata.createDataset({ id: datasetId, project: PROJECT, items: [], properties: [], metadata: {} });
  for (const n of sizes) {
    const s = metadata.createSeries({ id: randomUUID(), datasetId, item: { name: `W1 ${n}` }, properties: {}, dataFields: W1_FIELDS });
    series.set(n, s.id);
    const { timestamps, values, flags } = columns(n);
    const step = 64 * BLOCK_ROWS;
    for (let i = 0; i < n; i += step) {
      const e = Math.min(n, i + step);
      blocks.upsert(s.sid, [FieldKind.Single, FieldKind.Flag], {
        timestamps: timestamps.subarray(i, e),
        columns: [
          { kind: FieldKind.Single, values: values.subarray(i, e), missing: null },
          { kind: FieldKind.Flag, values: flags.subarray(i, e), missing: null },
        ],
      });
    }
    process.stderr.write(`seeded ${n} rows\n`);
  }
  const key = new SqliteApiKeyStore(db).createNow({
    clientId: "bench",
    roles: [],
    scopes: ["platform_timeseries_read"],
    projects: [PROJECT],
  }).key;
  db.close();
  return { datasetId, series, key };
}
