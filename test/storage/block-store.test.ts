// The block store against a model (a Map of timestamp to row): random upserts
// (with duplicate timestamps in one upload) and range deletes, across block
// boundaries, leave exactly the model's rows, in non-overlapping blocks of at
// most 16,536 rows (D30).
import fc from "fast-check";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BLOCK_ROWS, FieldKind, decodeBlock } from "../../src/storage/block-codec.js";
import { BlockStore } from "../../src/storage/block-store.js";
import { openDatabase } from "../../src/storage/database.js";
import { MetadataStore } from "../../src/timeseries/metadata-store.js";
import { RowBuilder } from "../../src/timeseries/value-rows.js";

const dir = mkdtempSync(join(tmpdir(), "meridian-blocks-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const KINDS = [FieldKind.Single, FieldKind.Flag];
type Row = [number, number | null, number | null];

let n = 0;
function freshSeries() {
  const db = openDatabase(join(dir, `b${n++}.db`));
  const meta = new MetadataStore(db);
  const dataset = `00000000-0000-0000-0000-${String(n).padStart(12, "0")}`;
  meta.createDataset({ id: dataset, project: "p", items: [], properties: [], metadata: {} });
  const s = meta.createSeries({ id: dataset.replace(/^0/, "1"), datasetId: dataset, item: {}, properties: {}, dataFields: [] });
  return { db, sid: s.sid, store: new BlockStore(db) };
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

function stored(db: ReturnType<typeof openDatabase>, sid: number): Row[] {
  const blocks = db.prepare("SELECT first_ts, last_ts, rows, payload FROM blocks WHERE sid = ? ORDER BY first_ts").all(sid) as { first_ts: number; last_ts: number; rows: number; payload: Buffer }[];
  const out: Row[] = [];
  let previousLast = -Infinity;
  for (const b of blocks) {
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
  fc.record({ kind: fc.constant("delete" as const), from: fc.integer({ min: 0, max: 120_000 }), span: fc.integer({ min: 0, max: 30_000 }) }),
);

describe("D30 block store writes", () => {
  it("D30 any sequence of upserts and range deletes leaves exactly the model's rows", () => {
    fc.assert(
      fc.property(fc.array(opArb, { minLength: 1, maxLength: 6 }), (ops) => {
        const { db, sid, store } = freshSeries();
        const model = new Map<number, Row>();
        try {
          for (const op of ops) {
            if (op.kind === "upsert") {
              const rows: Row[] = [];
              for (let i = 0; i < op.count; i++) {
                const t = op.start + i * op.step;
                rows.push([t, (i + op.seed) % 7 === 0 ? null : Math.fround((t % 1000) / 8), (i + op.seed) % 11 === 0 ? null : (t + op.seed) % 4]);
              }
              // Duplicates within the upload: the later row wins.
              for (let i = 0; i < op.count; i += 97) rows.push([op.start + i * op.step, op.seed, null]);
              for (const r of rows) model.set(r[0], r);
              expect(store.upsert(sid, KINDS, rowsOf(rows))).toBe(rows.length);
            } else {
              const to = op.from + op.span;
              let expected = 0;
              for (const t of [...model.keys()]) if (t >= op.from && t <= to) (model.delete(t), expected++);
              expect(store.deleteRange(sid, KINDS, op.from, to)).toBe(expected);
            }
          }
          const want = [...model.values()].sort((a, b) => a[0] - b[0]);
          const got = stored(db, sid);
          expect(got.length).toBe(want.length);
          expect(got).toEqual(want);
        } finally {
          db.close();
        }
      }),
      { numRuns: 25 },
    );
  });

  it("D30 appends fill the last block before starting another", () => {
    const { db, sid, store } = freshSeries();
    for (let k = 0; k < 5; k++) store.upsert(sid, KINDS, rowsOf(Array.from({ length: 10_000 }, (_, i): Row => [k * 10_000 + i, i, 0])));
    const sizes = (db.prepare("SELECT rows FROM blocks WHERE sid = ? ORDER BY first_ts").all(sid) as { rows: number }[]).map((r) => r.rows);
    expect(sizes).toEqual([BLOCK_ROWS, BLOCK_ROWS, BLOCK_ROWS, 50_000 - 3 * BLOCK_ROWS]);
    db.close();
  });

  it("D30 exactly 16,536 rows make one block, 16,537 make two", () => {
    for (const [count, blocks] of [
      [BLOCK_ROWS, 1],
      [BLOCK_ROWS + 1, 2],
    ]) {
      const { db, sid, store } = freshSeries();
      store.upsert(sid, KINDS, rowsOf(Array.from({ length: count }, (_, i): Row => [i * 60, 1, 1])));
      expect(store.stats(sid)).toMatchObject({ rows: count, blocks });
      db.close();
    }
  });
});

describe("D28 block store reads", () => {
  it("D28 the blocks of a range are exactly those that overlap it, in time order, whatever the page wants", () => {
    // Blocks with gaps between them (timestamps 0..39,999 step 1, then a hole, then step 7), so `from`
    // falls inside blocks, between them, before the first and after the last.
    const { db, sid, store } = freshSeries();
    store.upsert(sid, KINDS, rowsOf(Array.from({ length: 40_000 }, (_, i): Row => [i, 1, 0])));
    store.upsert(sid, KINDS, rowsOf(Array.from({ length: 150_000 }, (_, i): Row => [100_000 + i * 7, 1, 0])));
    const all = db.prepare("SELECT first_ts, last_ts FROM blocks WHERE sid = ? ORDER BY first_ts").all(sid) as { first_ts: number; last_ts: number }[];
    expect(all.length).toBeGreaterThan(10);
    try {
      fc.assert(
        fc.property(fc.integer({ min: -10, max: 1_200_000 }), fc.integer({ min: 0, max: 1_200_000 }), fc.oneof(fc.constant(Infinity), fc.integer({ min: 1, max: 400_000 })), (from, span, wanted) => {
          const to = from + span;
          const got = [...store.blocks(sid, from, to, wanted)].map((b) => [b.first_ts, b.last_ts]);
          expect(got).toEqual(all.filter((b) => b.first_ts <= to && b.last_ts >= from).map((b) => [b.first_ts, b.last_ts]));
        }),
        { numRuns: 200 },
      );
    } finally {
      db.close();
    }
  });
});
