// Value blocks of a series, whichever database holds them (D40): one row per
// block of up to 16,536 rows of one series, never overlapping. The rules are
// written once here; sqlite/block-store.ts and postgres/block-store.ts only
// fetch and store rows. A write decodes only the blocks it touches (those it
// overlaps, and the last one before it while that has room), merges,
// re-encodes and replaces them in one transaction (D30). An append, rows all
// after the series' last, touches only the small blocks at its end (D67,
// planAppend): its cost follows its rows, not the size of the last block.
import { BLOCK_ROWS, decodeBlock, encodeBlock, type FieldKind } from "./block-codec.js";
import { summarizeBlock } from "../../native/block-summary.js";
import { freeNow } from "../../native/detach.js";
import { concatRows, mergeRows, sliceRows, withoutRange, type RowSet } from "./row-set.js";

export interface StoredBlock {
  /** The block's row in its table, for replacing it. */
  rowid: number;
  first_ts: number;
  last_ts: number;
  rows: number;
  payload: Buffer;
}

/** An encoded block to store, with its summary (D65). */
export interface NewBlock {
  first: number;
  last: number;
  rows: number;
  payload: Buffer;
  summary: Buffer;
}

/**
 * Stored blocks of a series in time order as a chart's index lists them
 * (D65), without payloads, in columns: block i is first[i]..last[i], stored
 * as rowid[i], its summary the bytes summaries[offsets[i]..offsets[i + 1]]
 * (none when empty: a block stored before summaries, decoded instead). In
 * columns, not an object per block, so that reading the index of a 1B-row
 * series (60,000 blocks) leaves a few buffers a batch, not 60,000 objects and
 * buffers to collect (issue 30 item 5).
 */
export interface BlockIndex {
  count: number;
  first: Float64Array;
  last: Float64Array;
  rowid: Float64Array;
  summaries: Buffer;
  offsets: Uint32Array;
}

/**
 * The index as the stores' queries give it, one row for a batch of blocks in
 * time order: `numbers` is the text "rowid,first,last,summary bytes" of each
 * block, comma separated (none: no blocks), `summaries` their summaries one
 * after another.
 */
export function blockIndexOf(numbers: string | null, summaries: Buffer | null): BlockIndex {
  const n: number[] = numbers ? (JSON.parse(`[${numbers}]`) as number[]) : [];
  const count = n.length / 4;
  const index: BlockIndex = {
    count,
    first: new Float64Array(count),
    last: new Float64Array(count),
    rowid: new Float64Array(count),
    summaries: summaries ?? Buffer.alloc(0),
    offsets: new Uint32Array(count + 1),
  };
  let at = 0;
  for (let i = 0; i < count; i++) {
    index.rowid[i] = n[4 * i];
    index.first[i] = n[4 * i + 1];
    index.last[i] = n[4 * i + 2];
    at += n[4 * i + 3];
    index.offsets[i + 1] = at;
  }
  if (at !== index.summaries.length) throw new Error(`a block index of ${at} summary bytes came with ${index.summaries.length}`);
  return index;
}

/** A stored block's place and size, without its payload: what an append plans with. */
export interface BlockHead {
  rowid: number;
  first_ts: number;
  last_ts: number;
  rows: number;
}

/** A write worked out: the blocks it replaces, and the encoded blocks that take their place. */
export interface BlockWrite {
  old: readonly { rowid: number }[];
  blocks: NewBlock[];
}

/** The rows for one series of a write. */
export interface SeriesWrite {
  sid: number;
  kinds: readonly FieldKind[];
  rows: RowSet;
}

/** SQLite answers at once, PostgreSQL later: callers await either. */
export type Maybe<T> = T | Promise<T>;

export interface BlockStore {
  /**
   * Up to `limit` blocks overlapping [from, to] in time order, from the one
   * holding `from` (the last to start at or before it: blocks never
   * overlap), found in the index, so a read deep into a long series does not
   * walk every earlier block.
   */
  overlapping(sid: number, from: number, to: number, limit: number): Maybe<StoredBlock[]>;
  /** Whether a block starts within [from, to]: since a block's first_ts is one of its rows, whether rows there exist beyond the block before. */
  startsWithin(sid: number, from: number, to: number): Maybe<boolean>;
  /** Upserts rows (any order; of equal timestamps the last wins); returns how many rows were given. */
  upsert(sid: number, kinds: readonly FieldKind[], rows: RowSet): Maybe<number>;
  /** D68: upserts the rows of several series in one transaction, all or nothing; returns how many rows were given. */
  upsertMany(writes: readonly SeriesWrite[]): Maybe<number>;
  /** The series' last `limit` blocks, newest first, without payloads (D67: what an append plans with). */
  tail(sid: number, limit: number): Maybe<BlockHead[]>;
  /** Deletes the rows of [from, to]; returns how many there were. */
  deleteRange(sid: number, kinds: readonly FieldKind[], from: number, to: number): Maybe<number>;
  /** The first and last timestamps of a series' rows, or undefined when it has none (from the index: its first and last blocks). */
  bounds(sid: number): Maybe<{ first: number; last: number } | undefined>;
  /** Row count, block count and payload bytes of a series. */
  stats(sid: number): Maybe<{ rows: number; blocks: number; bytes: number }>;
  /** As overlapping(), the blocks' summaries instead of their payloads (D65), in columns. */
  summaries(sid: number, from: number, to: number, limit: number): Maybe<BlockIndex>;
  /** The payloads of those of the named blocks still stored, in any order; each its reader's own (it may free it, freeNow). */
  payloads(sid: number, rowids: readonly number[]): Maybe<{ rowid: number; first_ts: number; payload: Buffer }[]>;
  /**
   * Differs whenever blocks may have changed in a way watchChanges() does not
   * tell by series (another process's write on SQLite); undefined while
   * changes cannot be told (PostgreSQL's change feed is down): nothing cached may be used.
   */
  changeMark(): string | undefined;
  /** Calls fn with each series whose blocks a write changed, as soon as this process knows ("*": any may have); returns the unsubscribe. */
  watchChanges(fn: (sid: number | "*") => void): () => void;
}

/** Blocks fetched per query while reading: about 160 KB of W1 payloads. */
const BATCH = 16;

/**
 * The stored blocks that hold rows of [from, to], in time order (payloads
 * still encoded). Fetched a batch at a time, each batch picking up after the
 * last block of the one before, so a reader may pause between blocks (a
 * stream waiting on its client) without holding a connection or a read
 * transaction; a write in between is seen from the next batch on, and never
 * makes the walk repeat or skip a row that was already there. `rowsWanted`
 * sizes the first batch for a reader that needs only so many rows (a page).
 *
 * A block's payload is freed as soon as the reader asks for the next block,
 * so the reader must be done with it by then (the value walk's encoders copy
 * what they take). Why (D28): each payload is a fresh buffer of ~10 KB from
 * the database driver, which V8 frees only once a collection finds it dead;
 * a batch outlives the young generation's collections while the read waits
 * on its socket, so its payloads waited for a full collection, and a 10M-row
 * read held ~1.6 MiB more of them than a 1M-row read, and left the malloc
 * heap that much larger. Freed here, each batch's payloads take the memory
 * the last batch's gave back.
 */
export async function* blocksOf(
  store: BlockStore,
  sid: number,
  from: number,
  to: number,
  rowsWanted = Infinity,
): AsyncGenerator<StoredBlock> {
  for await (const found of blockBatchesOf(store, sid, from, to, firstBatch(rowsWanted))) {
    for (const block of found) {
      yield block;
      freeNow(block.payload);
    }
  }
}

/** The first batch's size for a reader that needs `rowsWanted` rows: enough blocks for them and one more. */
export function firstBatch(rowsWanted: number): number {
  return Math.min(BATCH, Math.ceil(rowsWanted / BLOCK_ROWS) + 1);
}

/** The same blocks a batch at a time (the first of `first` blocks, the rest of `size`), for a reader that takes several at once. */
export async function* blockBatchesOf(
  store: BlockStore,
  sid: number,
  from: number,
  to: number,
  first = BATCH,
  size = BATCH,
): AsyncGenerator<StoredBlock[]> {
  let batch = first;
  while (from <= to) {
    const found = await store.overlapping(sid, from, to, batch);
    if (found.length > 0) yield found;
    if (found.length < batch) return;
    from = found[found.length - 1].last_ts + 1;
    batch = size;
  }
}

/** Whether the block before normalised rows matters to their write: when no block holds their first row, they may append to it. */
export function mayAppend(touched: StoredBlock[], rows: RowSet): boolean {
  return touched.length === 0 || touched[0].first_ts > rows.timestamps[0];
}

/**
 * The write of normalised rows: `touched` are the stored blocks overlapping
 * their range, `before` the last block to start before their first row,
 * when mayAppend() asked for it. Rows append to it while it has room.
 */
export function planUpsert(touched: StoredBlock[], before: StoredBlock | undefined, kinds: readonly FieldKind[], rows: RowSet): BlockWrite {
  const old = [...touched];
  if (mayAppend(touched, rows) && before && before.rows < BLOCK_ROWS) old.unshift(before);
  const merged = old.length > 0 ? mergeRows(decodeAll(old, kinds), rows) : rows;
  return { old, blocks: encodeBlocks(merged) };
}

/**
 * How many of a series' newest blocks an append looks at: its tail is merged
 * as a binary counter (below), so it holds at most about log2(16,536) = 14
 * partial blocks; the rest is margin.
 */
export const TAIL_BLOCKS = 24;

/**
 * D67: the blocks an append of normalised rows merges with, newest first, or
 * undefined when the rows do not all come after the series' last row (then
 * D30's upsert, planUpsert()). `tail` is the series' newest blocks, newest
 * first (BlockStore.tail()).
 *
 * The rows become a block of their own, taking in the newest partial blocks
 * while each is no larger than what has been gathered so far. The end of a
 * series is therefore a run of partial blocks of falling sizes, like the
 * digits of a binary counter: appending k rows re-encodes about k * log2(16,536 / k)
 * rows over time, never a full block for one row, and a tail never holds more
 * than about 14 partial blocks, which every read takes as it takes any block.
 * Gathered past 16,536 rows, encodeBlocks() seals full blocks and leaves the
 * rest as the new tail. Why not a separate row log with its own reads
 * (Prometheus' head, InfluxDB's cache): every read, chart summary and cursor
 * already reads blocks, exactly; a tail of blocks needs no second read path,
 * and one transaction writes it, so a crash keeps every acknowledged append.
 */
export function planAppendMerge(tail: readonly BlockHead[], rows: RowSet): BlockHead[] | undefined {
  if (tail.length > 0 && rows.timestamps[0] <= tail[0].last_ts) return undefined;
  const merge: BlockHead[] = [];
  let gathered = rows.timestamps.length;
  for (const b of tail) {
    if (b.rows >= BLOCK_ROWS || b.rows > gathered) break;
    merge.push(b);
    gathered += b.rows;
  }
  return merge;
}

/** The write of an append: `merged` are planAppendMerge()'s blocks (any order) with their payloads. */
export function planAppend(
  merged: { rowid: number; first_ts: number; payload: Buffer }[],
  kinds: readonly FieldKind[],
  rows: RowSet,
): BlockWrite {
  if (merged.length === 0) return { old: [], blocks: encodeBlocks(rows) };
  const inOrder = [...merged].sort((a, b) => a.first_ts - b.first_ts);
  return { old: merged, blocks: encodeBlocks(concatRows(decodeAll(inOrder, kinds), rows)) };
}

/** The write that removes [from, to] from the blocks overlapping it, and how many rows go. */
export function planDelete(
  touched: StoredBlock[],
  kinds: readonly FieldKind[],
  from: number,
  to: number,
): BlockWrite & { removed: number } {
  const before = touched.reduce((a, b) => a + b.rows, 0);
  const kept = withoutRange(decodeAll(touched, kinds), from, to);
  return { old: touched, blocks: encodeBlocks(kept), removed: before - kept.timestamps.length };
}

/** The rows of one or more blocks, which must hold the series' columns. */
export function decodeAll(blocks: readonly { rowid: number; payload: Buffer }[], kinds: readonly FieldKind[]): RowSet {
  return concatRows(
    ...blocks.map((b) => {
      const decoded = decodeBlock(b.payload);
      if (decoded.columns.length !== kinds.length || decoded.columns.some((c, i) => c.kind !== kinds[i])) {
        throw new Error(`block ${b.rowid} does not match the series' data fields`);
      }
      return decoded;
    }),
  );
}

/** The summary of a stored block, or null for one that does not decode (a read decodes it instead, and refuses it there). */
export function summaryOfStored(payload: Buffer): Buffer | null {
  try {
    return summarizeBlock(payload);
  } catch {
    return null;
  }
}

/** Normalised rows cut into blocks of BLOCK_ROWS and encoded. */
export function encodeBlocks(rows: RowSet): NewBlock[] {
  const out: NewBlock[] = [];
  const n = rows.timestamps.length;
  for (let start = 0; start < n; start += BLOCK_ROWS) {
    const part = sliceRows(rows, start, Math.min(n, start + BLOCK_ROWS));
    const count = part.timestamps.length;
    const payload = encodeBlock(part);
    out.push({ first: part.timestamps[0], last: part.timestamps[count - 1], rows: count, payload, summary: summarizeBlock(payload) });
  }
  return out;
}
