// W1 series of the given sizes in a new Meridian database, written through
// the storage modules (the import path is measured by bench/codec), and a
// read key: what bench/values and bench/chart read.
import { randomUUID } from "node:crypto";
import { openDatabase } from "../dist/sqlite/database.js";
import { SqliteApiKeyStore } from "../dist/sqlite/api-key-store.js";
import { SqliteMetadataStore as MetadataStore } from "../dist/sqlite/metadata-store.js";
import { SqliteBlockStore } from "../dist/sqlite/block-store.js";
import { BLOCK_ROWS, FieldKind } from "../dist/timeseries/blocks/block-codec.js";
import { encodeBlocks } from "../dist/timeseries/blocks/block-store.js";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { W1_FIELDS, columnChunks, columns } from "./w1.js";

export const PROJECT = "bench";

/** A dataset of one W1 series per size, each filled by write(sid, n), and a read key: what the seeders return. */
function seedSeries(db, sizes, write) {
  const metadata = new MetadataStore(db);
  const datasetId = randomUUID();
  const series = new Map(); // rows -> series id
  metadata.createDataset({ id: datasetId, project: PROJECT, items: [], properties: [], metadata: {} });
  for (const n of sizes) {
    const s = metadata.createSeries({ id: randomUUID(), datasetId, item: { name: `W1 ${n}` }, properties: {}, dataFields: W1_FIELDS });
    series.set(n, s.id);
    const started = performance.now();
    write(s.sid, n);
    process.stderr.write(`seeded ${n} rows in ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
  }
  const key = new SqliteApiKeyStore(db).createNow({
    clientId: "bench",
    roles: [],
    scopes: ["platform_timeseries_read"],
    projects: [PROJECT],
  }).key;
  return { datasetId, series, key };
}

/** W1's columns as the stores take them. */
const w1Rows = ({ timestamps, values, flags }) => ({
  timestamps,
  columns: [
    { kind: FieldKind.Single, values, missing: null },
    { kind: FieldKind.Flag, values: flags, missing: null },
  ],
});

/** Seeds dbPath through the block store's upserts; returns the dataset, the series id of each size, and an API key that may read them. */
export function seedW1(dbPath, sizes) {
  const db = openDatabase(dbPath);
  const blocks = new SqliteBlockStore(db);
  const seeded = seedSeries(db, sizes, (sid, n) => {
    const { timestamps, values, flags } = columns(n);
    const step = 64 * BLOCK_ROWS;
    for (let i = 0; i < n; i += step) {
      const e = Math.min(n, i + step);
      blocks.upsertNow(
        sid,
        [FieldKind.Single, FieldKind.Flag],
        w1Rows({ timestamps: timestamps.subarray(i, e), values: values.subarray(i, e), flags: flags.subarray(i, e) }),
      );
    }
  });
  db.close();
  return seeded;
}

/**
 * As seedW1, for series too long for an upload's path (100M, 1B rows): the
 * rows generated a million at a time and written as blocks directly (encoded
 * and summarised as the store does, inserted as they are: nothing to merge
 * in a new series). Kept: a database seeded before (dbPath + ".json" says
 * what it holds) is used again.
 */
export function seedW1Blocks(dbPath, sizes) {
  const done = `${dbPath}.json`;
  if (existsSync(done)) {
    const saved = JSON.parse(readFileSync(done, "utf8"));
    if (JSON.stringify(saved.sizes) === JSON.stringify(sizes)) {
      process.stderr.write(`using ${dbPath}, seeded before\n`);
      return { datasetId: saved.datasetId, series: new Map(saved.series), key: saved.key };
    }
  }
  const db = openDatabase(dbPath);
  db.pragma("synchronous = OFF"); // a bench file: a crash means seeding again
  const insert = db.prepare("INSERT INTO blocks (sid, first_ts, last_ts, rows, payload, summary) VALUES (?, ?, ?, ?, ?, ?)");
  const seeded = seedSeries(db, sizes, (sid, n) => {
    for (const chunk of columnChunks(n, 64 * BLOCK_ROWS)) {
      const blocks = encodeBlocks(w1Rows(chunk));
      db.transaction(() => {
        for (const b of blocks) insert.run(sid, b.first, b.last, b.rows, b.payload, b.summary);
      })();
    }
  });
  db.close();
  writeFileSync(done, JSON.stringify({ sizes, datasetId: seeded.datasetId, series: [...seeded.series], key: seeded.key }));
  return seeded;
}
