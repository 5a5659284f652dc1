// The explorer's figures' data (issue 43 item 6), seeded as bench/chart/scale.js
// seeds its own (blocks written directly, bench/seed-w1.js): the 1B-row W1
// series in bench/.work/chart-scale-1B.db (scale.js's own file for
// BENCH_SCALE_ROWS=1000000000, so either bench seeds it for both), and three
// W1 series of 100M rows each in bench/.work/explorer-3x100M.db, told apart
// by their values and units (two in degC, one in kPa: two y axes). Kept like
// scale.js's: a file seeded before (its .json beside it) is used again.
// Usage: node bench/explorer/seed.js [1B] [3x100M]   (both when none is named)
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { openDatabase } from "../../dist/sqlite/database.js";
import { SqliteApiKeyStore } from "../../dist/sqlite/api-key-store.js";
import { SqliteMetadataStore } from "../../dist/sqlite/metadata-store.js";
import { BLOCK_ROWS, FieldKind } from "../../dist/timeseries/blocks/block-codec.js";
import { encodeBlocks } from "../../dist/timeseries/blocks/block-store.js";
import { PROJECT, seedW1Blocks } from "../seed-w1.js";
import { W1_FIELDS, checkW1, columnChunks } from "../w1.js";

export const WORK = join(dirname(fileURLToPath(import.meta.url)), "..", ".work");
export const ONE_B = join(WORK, "chart-scale-1B.db");
/** Rows of each overlaid series: 100M, or BENCH_OVERLAID_ROWS (a smaller file of its own, to try the bench quickly). */
export const OVERLAID = Number(process.env.BENCH_OVERLAID_ROWS ?? 100_000_000);
export const THREE = join(WORK, OVERLAID === 100_000_000 ? "explorer-3x100M.db" : `explorer-3x${OVERLAID}.db`);

/** The three overlaid series: W1's values mapped to each one's own. */
const SHAPES = [
  { name: "W1 100M inlet", unit: "degC", map: (v) => v },
  { name: "W1 100M pressure", unit: "kPa", map: (v) => v * 10 + 80 },
  { name: "W1 100M outlet", unit: "degC", map: (v) => v - 3 },
];

/** The 1B-row series (scale.js's database): { datasetId, series: Map(rows -> id), key }. */
export function seedOneB() {
  mkdirSync(WORK, { recursive: true });
  return seedW1Blocks(ONE_B, [1_000_000_000]);
}

/** The three 100M series: { datasetId, ids: [id...], key }. */
export function seedThree() {
  mkdirSync(WORK, { recursive: true });
  const done = `${THREE}.json`;
  if (existsSync(done)) return JSON.parse(readFileSync(done, "utf8"));
  const db = openDatabase(THREE);
  db.pragma("synchronous = OFF"); // a bench file: a crash means seeding again
  const metadata = new SqliteMetadataStore(db);
  const datasetId = randomUUID();
  metadata.createDataset({ id: datasetId, project: PROJECT, items: [], properties: [], metadata: {} });
  const insert = db.prepare("INSERT INTO blocks (sid, first_ts, last_ts, rows, payload, summary) VALUES (?, ?, ?, ?, ?, ?)");
  const ids = [];
  for (const shape of SHAPES) {
    const s = metadata.createSeries({
      id: randomUUID(),
      datasetId,
      item: { name: shape.name, unit: shape.unit },
      properties: {},
      dataFields: W1_FIELDS,
    });
    ids.push(s.id);
    const started = performance.now();
    for (const chunk of columnChunks(OVERLAID, 64 * BLOCK_ROWS)) {
      const values = chunk.values.map(shape.map);
      const blocks = encodeBlocks({
        timestamps: chunk.timestamps,
        columns: [
          { kind: FieldKind.Single, values, missing: null },
          { kind: FieldKind.Flag, values: chunk.flags, missing: null },
        ],
      });
      db.transaction(() => {
        for (const b of blocks) insert.run(s.sid, b.first, b.last, b.rows, b.payload, b.summary);
      })();
    }
    process.stderr.write(`seeded ${shape.name} in ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
  }
  const key = new SqliteApiKeyStore(db).createNow({
    clientId: "bench",
    roles: [],
    scopes: ["platform_timeseries_read"],
    projects: [PROJECT],
  }).key;
  db.close();
  const seeded = { datasetId, ids, key };
  writeFileSync(done, JSON.stringify(seeded));
  return seeded;
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  checkW1();
  const which = process.argv.slice(2);
  if (which.length === 0 || which.includes("1B")) seedOneB();
  if (which.length === 0 || which.includes("3x100M")) seedThree();
}
