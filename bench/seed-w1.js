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
  const metadata = new MetadataStore(db);
  const insert = db.prepare("INSERT INTO blocks (sid, first_ts, last_ts, rows, payload, summary) VALUES (?, ?, ?, ?, ?, ?)");
  const datasetId = randomUUID();
  const series = new Map();
  metadata.createDataset({ id: datasetId, project: PROJECT, items: [], properties: [], metadata: {} });
  for (const n of sizes) {
    const s = metadata.createSeries({ id: randomUUID(), datasetId, item: { name: `W1 ${n}` }, properties: {}, dataFields: W1_FIELDS });
    series.set(n, s.id);
    const started = performance.now();
    let written = 0;
    for (const { timestamps, values, flags } of columnChunks(n, 64 * BLOCK_ROWS)) {
      const blocks = encodeBlocks({
        timestamps,
        columns: [
          { kind: FieldKind.Single, values, missing: null },
          { kind: FieldKind.Flag, values: flags, missing: null },
        ],
      });
      db.transaction(() => {
        for (const b of blocks) insert.run(s.sid, b.first, b.last, b.rows, b.payload, b.summary);
      })();
      written += timestamps.length;
      if (written % (100 * 64 * BLOCK_ROWS) < 64 * BLOCK_ROWS) process.stderr.write(`  ${(written / 1e6).toFixed(0)}M rows of ${n / 1e6}M\n`);
    }
    process.stderr.write(`seeded ${n} rows by blocks in ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
  }
  const key = new SqliteApiKeyStore(db).createNow({
    clientId: "bench",
    roles: [],
    scopes: ["platform_timeseries_read"],
    projects: [PROJECT],
  }).key;
  db.close();
  writeFileSync(done, JSON.stringify({ sizes, datasetId, series: [...series], key }));
  return { datasetId, series, key };
}
