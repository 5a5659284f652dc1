// The block store against a model (a Map of timestamp to row), on both
// backends (D40): random upserts (with duplicate timestamps in one upload)
// and range deletes, across block boundaries, leave exactly the model's rows,
// in non-overlapping blocks of at most 16,536 rows (D30).
import fc from "fast-check";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BLOCK_ROWS, FieldKind, MAX_TIMESTAMP, MIN_TIMESTAMP, decodeBlock } from "../../../src/timeseries/blocks/block-codec.js";
import { blocksOf, type BlockStore } from "../../../src/timeseries/blocks/block-store.js";
import { SqliteBlockStore } from "../../../src/sqlite/block-store.js";
import { PostgresBlockStore } from "../../../src/postgres/block-store.js";
import { openDatabase } from "../../../src/sqlite/database.js";
import { connectPostgres } from "../../../src/postgres/database.js";
import { migratePostgres } from "../../../src/postgres/schema.js";
import type { MetadataStore } from "../../../src/timeseries/metadata-store.js";
import { SqliteMetadataStore } from "../../../src/sqlite/metadata-store.js";
import { PostgresMetadataStore } from "../../../src/postgres/metadata-store.js";
import { RowBuilder } from "../../../src/timeseries/value-rows.js";
import { PG_SKIP_REASON, PG_URL, freshPgDatabase } from "../../helpers/postgres.js";

const dir = mkdtempSync(join(tmpdir(), "meridian-blocks-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const KINDS = [FieldKind.Single, FieldKind.Flag];
type Row = [number, number | null, number | null];

interface Stores {
  meta: MetadataStore;
  store: BlockStore;
  close: () => Promise<void>;
}

let n = 0;
const backends: { name: string; skip?: string; open(): Promise<Stores> }[] = [
  {
    name: "SQLite",
    async open() {
      const db = openDatabase(join(dir, `b${n++}.db`));
      return { meta: new SqliteMetadataStore(db), store: new SqliteBlockStore(db), close: async () => void db.close() };
    },
  },
  {
    name: "PostgreSQL",
    skip: PG_URL ? undefined : PG_SKIP_REASON,
    async open() {
      const pg = await freshPgDatabase();
      const sql = connectPostgres({ url: pg.url, poolSize: 2, statementTimeoutMs: 10_000, connectTimeoutS: 5 });
      await migratePostgres(sql);
      return {
        meta: new PostgresMetadataStore(sql),
        store: new PostgresBlockStore(sql),
        async close() {
          await sql.end();
          await pg.drop();
        },
      };
    },
  },
];

/** A new series in a new database. */
async function freshSeries(b: (typeof backends)[number]) {
  const stores = await b.open();
  const dataset = `00000000-0000-0000-0000-${String(++n).padStart(12, "0")}`;
  await stores.meta.createDataset({ id: dataset, project: "p", items: [], properties: [], metadata: {} });
  const s = (await stores.meta.createSeries({
    id: dataset.replace(/^0/, "1"),
    datasetId: dataset,
    item: {},
    properties: {},
    dataFields: [],
  }))!;
  return { ...stores, sid: s.sid };
}

function rowsOf(rows: Row[]) {
  const b = new RowBuilder(KINDS, 16);
  for (const [t, v, f] of rows) {
    const i = b.push(t);
    if (v !== null) b.set(i, 0, v);
    if (f !== null) b.set(i, 1, f);
  }
  return b.take();
}

async function allBlocks(store: BlockStore, sid: number) {
  const out = [];
  // A copy of each payload: the walk frees it once the next block is asked for (D28).
  for await (const b of blocksOf(store, sid, MIN_TIMESTAMP, MAX_TIMESTAMP)) out.push({ ...b, payload: Buffer.from(b.payload) });
  return out;
}

/** The stored rows, checking the blocks' invariants on the way. */
async function stored(store: BlockStore, sid: number): Promise<Row[]> {
  const out: Row[] = [];
  let previousLast = -Infinity;
  for (const b of await allBlocks(store, sid)) {
    const d = decodeBlock(b.payload);
    expect(b.rows).toBe(d.timestamps.length);
    expect(b.rows).toBeLessThanOrEqual(BLOCK_ROWS);
    expect(b.first_ts).toBe(d.timestamps[0]);
    expect(b.last_ts).toBe(d.timestamps[b.rows - 1]);
    expect(b.first_ts).toBeGreaterThan(previousLast); // blocks never overlap
    previousLast = b.last_ts;
    for (let i = 0; i < b.rows; i++) {
      const [v, f] = d.columns;
      out.push([d.timestamps[i], v.missing?.[i] ? null : v.values[i], f.missing?.[i] ? null : f.values[i]]);
    }
  }
  return out;
}

const opArb = fc.oneof(
  // A run of rows (regular step) with some rows drawn again at the same timestamps.
  fc.record({
    kind: fc.constant("upsert" as const),
    start: fc.integer({ min: 0, max: 60_000 }),
    count: fc.integer({ min: 1, max: 40_000 }),
    step: fc.integer({ min: 1, max: 3 }),
    seed: fc.integer({ min: 0, max: 1000 }),
  }),
  fc.record({
    kind: fc.constant("delete" as const),
    from: fc.integer({ min: 0, max: 120_000 }),
    span: fc.integer({ min: 0, max: 30_000 }),
  }),
);

describe.each(backends)("D30 block store writes ($name)", (b) => {
  if (b.skip) {
    it.skip(b.skip);
    return;
  }

  it("D30 any sequence of upserts and range deletes leaves exactly the model's rows", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 6 }), async (ops) => {
        const { sid, store, close } = await freshSeries(b);
        const model = new Map<number, Row>();
        try {
          for (const op of ops) {
            if (op.kind === "upsert") {
              const rows: Row[] = [];
              for (let i = 0; i < op.count; i++) {
                const t = op.start + i * op.step;
                rows.push([
                  t,
                  (i + op.seed) % 7 === 0 ? null : Math.fround((t % 1000) / 8),
                  (i + op.seed) % 11 === 0 ? null : (t + op.seed) % 4,
                ]);
              }
              // Duplicates within the upload: the later row wins.
              for (let i = 0; i < op.count; i += 97) rows.push([op.start + i * op.step, op.seed, null]);
              for (const r of rows) model.set(r[0], r);
              expect(await store.upsert(sid, KINDS, rowsOf(rows))).toBe(rows.length);
            } else {
              const to = op.from + op.span;
              let expected = 0;
              for (const t of [...model.keys()])
                if (t >= op.from && t <= to) {
                  model.delete(t);
                  expected++;
                }
              expect(await store.deleteRange(sid, KINDS, op.from, to)).toBe(expected);
            }
          }
          const want = [...model.values()].sort((a, b) => a[0] - b[0]);
          const got = await stored(store, sid);
          expect(got.length).toBe(want.length);
          expect(got).toEqual(want);
        } finally {
          await close();
        }
      }),
      { numRuns: b.name === "SQLite" ? 25 : 8 },
    );
  }, 120_000); // native/check.sh runs it against the ASan build, where each write also summarises its blocks (D65): over 30 s on a loaded machine

  it("D67 appends of 10,000 rows fill full blocks, the rest stays one partial tail block", async () => {
    const { sid, store, close } = await freshSeries(b);
    for (let k = 0; k < 5; k++)
      await store.upsert(sid, KINDS, rowsOf(Array.from({ length: 10_000 }, (_, i): Row => [k * 10_000 + i, i, 0])));
    const sizes = (await allBlocks(store, sid)).map((r) => r.rows);
    expect(sizes).toEqual([BLOCK_ROWS, BLOCK_ROWS, BLOCK_ROWS, 50_000 - 3 * BLOCK_ROWS]);
    await close();
  });

  it("D67 an append leaves a larger last block as it is and writes its rows as a block of their own", async () => {
    const { sid, store, close } = await freshSeries(b);
    await store.upsert(sid, KINDS, rowsOf(Array.from({ length: 10_000 }, (_, i): Row => [i, i, 0])));
    const [big] = await store.tail(sid, 5);
    await store.upsert(sid, KINDS, rowsOf([[20_000, 1, 1]]));
    const tail = await store.tail(sid, 5);
    expect(tail.map((t) => t.rows)).toEqual([1, 10_000]);
    expect(tail[1]).toEqual(big); // the same stored block: not decoded, not rewritten
    await close();
  });

  it("D67 small appends keep the tail to a few partial blocks of falling sizes, sealed into full blocks", async () => {
    const { sid, store, close } = await freshSeries(b);
    // 16 rows an append: the tail grows as with one (16, 32, ... 16,384), in a sixteenth of the writes.
    const total = 2 * 16_384 + 640;
    for (let i = 0; i < total; i += 16) {
      await store.upsert(sid, KINDS, rowsOf(Array.from({ length: 16 }, (_, j): Row => [(i + j) * 60, (i + j) % 13, (i + j) % 3])));
      if (i % 1024 === 0) {
        const partial = (await store.tail(sid, 40)).filter((t) => t.rows < BLOCK_ROWS);
        expect(partial.length).toBeLessThanOrEqual(15);
      }
    }
    const blocks = await allBlocks(store, sid);
    expect(blocks[0].rows).toBe(BLOCK_ROWS); // sealed
    const sizes = blocks.slice(1).map((x) => x.rows);
    expect([...sizes].sort((x, y) => y - x)).toEqual(sizes); // the tail's sizes fall
    const got = await stored(store, sid);
    expect(got).toEqual(Array.from({ length: total }, (_, i): Row => [i * 60, i % 13, i % 3]));
    await close();
  }, 120_000);

  it("D67 appends mixed with upserts into the middle and range deletes leave exactly the model's rows", async () => {
    const step = fc.oneof(
      fc.record({ kind: fc.constant("append" as const), count: fc.integer({ min: 1, max: 3000 }) }),
      fc.record({ kind: fc.constant("middle" as const), at: fc.nat(), count: fc.integer({ min: 1, max: 500 }) }),
      fc.record({ kind: fc.constant("delete" as const), at: fc.nat(), span: fc.integer({ min: 0, max: 2000 }) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 40 }), async (steps) => {
        const { sid, store, close } = await freshSeries(b);
        const model = new Map<number, Row>();
        let end = 0;
        try {
          for (const [n, op] of steps.entries()) {
            if (op.kind === "delete") {
              const from = end === 0 ? 0 : op.at % end;
              for (const t of [...model.keys()]) if (t >= from && t <= from + op.span) model.delete(t);
              await store.deleteRange(sid, KINDS, from, from + op.span);
              continue;
            }
            const start = op.kind === "append" ? end : end === 0 ? 0 : op.at % end;
            const rows = Array.from({ length: op.count }, (_, i): Row => [start + i, (i + n) % 5 === 0 ? null : n, i % 4]);
            for (const r of rows) model.set(r[0], r);
            end = Math.max(end, start + op.count);
            await store.upsert(sid, KINDS, rowsOf(rows));
          }
          expect(await stored(store, sid)).toEqual([...model.values()].sort((x, y) => x[0] - y[0]));
        } finally {
          await close();
        }
      }),
      { numRuns: b.name === "SQLite" ? 30 : 8 },
    );
  }, 120_000);

  it("D30 exactly 16,536 rows make one block, 16,537 make two", async () => {
    for (const [count, blocks] of [
      [BLOCK_ROWS, 1],
      [BLOCK_ROWS + 1, 2],
    ]) {
      const { sid, store, close } = await freshSeries(b);
      await store.upsert(sid, KINDS, rowsOf(Array.from({ length: count }, (_, i): Row => [i * 60, 1, 1])));
      expect(await store.stats(sid)).toMatchObject({ rows: count, blocks });
      await close();
    }
  });
});

describe.each(backends)("D28 block store reads ($name)", (b) => {
  if (b.skip) {
    it.skip(b.skip);
    return;
  }

  it("D28 the blocks of a range are exactly those that overlap it, in time order, whatever the page wants", async () => {
    // Blocks with gaps between them (timestamps 0..39,999 step 1, then a hole, then step 7), so `from`
    // falls inside blocks, between them, before the first and after the last.
    const { sid, store, close } = await freshSeries(b);
    await store.upsert(sid, KINDS, rowsOf(Array.from({ length: 40_000 }, (_, i): Row => [i, 1, 0])));
    await store.upsert(sid, KINDS, rowsOf(Array.from({ length: 150_000 }, (_, i): Row => [100_000 + i * 7, 1, 0])));
    const all = await allBlocks(store, sid);
    expect(all.length).toBeGreaterThan(10);
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: -10, max: 1_200_000 }),
          fc.integer({ min: 0, max: 1_200_000 }),
          fc.oneof(fc.constant(Infinity), fc.integer({ min: 1, max: 400_000 })),
          async (from, span, wanted) => {
            const to = from + span;
            const got: number[][] = [];
            for await (const blk of blocksOf(store, sid, from, to, wanted)) got.push([blk.first_ts, blk.last_ts]);
            expect(got).toEqual(all.filter((b) => b.first_ts <= to && b.last_ts >= from).map((b) => [b.first_ts, b.last_ts]));
          },
        ),
        { numRuns: 200 },
      );
    } finally {
      await close();
    }
  });

  it("D28 a walk frees each block's payload as soon as the reader asks for the next, without waiting for a collection", async () => {
    // Values that do not compress, so that every payload is a buffer of its own (more than Node's 4 KB pooled ones).
    const { sid, store, close } = await freshSeries(b);
    try {
      await store.upsert(
        sid,
        KINDS,
        rowsOf(Array.from({ length: 5 * BLOCK_ROWS }, (_, i): Row => [i, Math.fround(Math.sin(i) * 1e6), i % 7])),
      );
      const expected = (await allBlocks(store, sid)).map((blk) => decodeBlock(blk.payload).timestamps.length);
      const seen: Buffer[] = [];
      const rows: number[] = [];
      for await (const blk of blocksOf(store, sid, MIN_TIMESTAMP, MAX_TIMESTAMP)) {
        expect(seen.every((p) => p.byteLength === 0)).toBe(true); // those before: freed
        expect(blk.payload.byteLength).toBeGreaterThan(4096);
        rows.push(decodeBlock(blk.payload).timestamps.length); // this one: whole while it is the reader's
        seen.push(blk.payload);
      }
      expect(rows).toEqual(expected);
      expect(seen).toHaveLength(5);
      expect(seen.every((p) => p.byteLength === 0)).toBe(true);
    } finally {
      await close();
    }
  });
});
