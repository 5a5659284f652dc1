// Hot blocks in memory (issue 30 item 4): a dashboard asks the same charts
// again and again, and each would read the same block index and payloads
// from the database. Kept here: a series' whole block index with its summaries
// (D65), and the payloads of the blocks charts decoded, least recently used
// out past MERIDIAN_BLOCK_CACHE_MB. A write to a series drops what is kept of
// it: this process's writes at once, another process's or replica's as the
// store hears of them (SQLite's data_version, PostgreSQL's change feed); while
// the store cannot tell (the feed is down), every read goes to the database.
import { ReleasedBytes } from "../../runtime/garbage.js";
import { freeNow } from "../../native/detach.js";
import { BlocksMoved, SEGMENT_ROWS, joinIndexes, type ChartSource, type IndexRun, type PayloadBatch } from "../chart-blocks.js";
import { MAX_TIMESTAMP, MIN_TIMESTAMP } from "./block-codec.js";
import type { BlockIndex, BlockStore } from "./block-store.js";
import { segmentBlock } from "../../native/block-segments.js";

/** What the cache needs of a block store. */
export type ChartStore = Pick<BlockStore, "summaries" | "payloads" | "changeMark" | "watchChanges">;

/**
 * Index rows read per query when a series' index is not kept: the numbers of
 * 4,096 (text, then an array) passed V8's 128 KB and waited in its
 * large-object space for a full collection; those of 2,048 (about 70 KB) die
 * young. Not fewer: a batch of payloads ends with its run of the index, so
 * runs of 1,024 meant twice the payload queries and addon batches.
 */
const INDEX_BATCH = 2048;
/** A series' index is kept only while it takes at most this part of the cache. */
const INDEX_SHARE = 4;
/** Bytes an entry costs beyond its buffers (objects, map slots), erring high. */
const ENTRY_OVERHEAD = 200;

interface Entry {
  sid: number;
  /** The series' generation when kept: an entry of an older one is stale. */
  generation: string;
  bytes: number;
  index?: BlockIndex;
  payload?: Buffer;
  /** The payload's segments (D65), so that a chart decodes only the parts of it a bucket edge falls in; none for a block that does not decode. */
  segments?: Buffer;
}

export class BlockCache implements ChartSource {
  /** In order of use, least recent first (a Map keeps insertion order). */
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;
  /** Per series, bumped by each write heard; entries of older generations are dropped when met. */
  private readonly generations = new Map<number, number>();
  private everything = 0;
  private mark: string | undefined;
  private readonly released: ReleasedBytes;

  constructor(
    private readonly store: ChartStore,
    private readonly maxBytes: number,
    /** Told of each hit, miss and eviction (the metrics, D43). */
    private readonly onEvent: (event: "hit" | "miss" | "eviction") => void = () => {},
    /** Told the bytes held whenever they change (the metrics, D43). */
    private readonly onBytes: (bytes: number) => void = () => {},
    /** Index rows read per query (tests walk a series of a few blocks in several batches). */
    private readonly indexBatch = INDEX_BATCH,
  ) {
    this.released = new ReleasedBytes(Math.max(maxBytes, 1));
    store.watchChanges((sid) => (sid === "*" ? this.dropAll() : this.drop(sid)));
  }

  /** Bytes held (for tests and metrics). */
  get size(): number {
    return this.bytes;
  }

  /** Whether kept entries may be used now: the cache is on and the store can tell changes; a change it cannot attribute drops everything. */
  private usable(): boolean {
    if (this.maxBytes === 0) return false;
    const mark = this.store.changeMark();
    if (mark === undefined) return false;
    if (mark !== this.mark) {
      this.dropAll();
      this.mark = mark;
    }
    return true;
  }

  async *runs(sid: number, from: number, to: number): AsyncGenerator<IndexRun> {
    if (!this.usable()) {
      yield* this.storeRuns(sid, from, to);
      return;
    }
    const index = await this.indexOf(sid);
    // Blocks are in time order and never overlap: those ending at or after `from`, starting at or before `to`.
    const lo = lowerBound(index.last, from, index.count);
    const hi = lowerBound(index.first, to + 1, index.count);
    if (lo < hi) yield { index, lo, hi };
  }

  /** The store's payloads not kept here are the chart's alone: the batch frees them when the chart is done. */
  async payloads(sid: number, rowids: number[], firsts: number[], segments?: (Buffer | undefined)[]): Promise<PayloadBatch> {
    const use = this.usable();
    const generation = this.generation(sid);
    const out: (Buffer | undefined)[] = rowids.map((rowid, i) => {
      const kept = use ? this.get(`p${sid}:${rowid}`, sid) : undefined;
      if (segments !== undefined) segments[i] = kept?.segments;
      return kept?.payload;
    });
    const missing = rowids.filter((_, i) => out[i] === undefined);
    const read: Buffer[] = [];
    if (missing.length > 0) {
      const found = new Map((await this.store.payloads(sid, missing)).map((r) => [r.rowid, r]));
      rowids.forEach((rowid, i) => {
        if (out[i] !== undefined) return;
        const block = found.get(rowid);
        // Gone, or its rowid taken by a later block (SQLite reuses the largest): the index read is stale.
        if (block?.first_ts !== firsts[i]) throw new BlocksMoved(`block ${rowid} of series ${sid} was replaced meanwhile`);
        const payload = block.payload;
        out[i] = payload;
        // A block's payload never changes under its rowid while its series' generation stands.
        if (!use) {
          read.push(payload);
          return;
        }
        const kept = segmentsOf(payload);
        if (segments !== undefined) segments[i] = kept;
        this.keep(`p${sid}:${rowid}`, {
          sid,
          generation,
          bytes: payload.length + (kept?.length ?? 0) + ENTRY_OVERHEAD,
          payload,
          segments: kept,
        });
      });
    }
    return { payloads: out as Buffer[], release: () => read.forEach(freeNow) };
  }

  /** The series' whole index, kept or read (and kept when small enough and no write came meanwhile). */
  private async indexOf(sid: number): Promise<BlockIndex> {
    const key = `i${sid}`;
    const hit = this.get(key, sid)?.index;
    if (hit !== undefined) return hit;
    const generation = this.generation(sid);
    // Read a batch at a time: a 1B-row series' 60,000 rows are never all objects at once.
    const runs: IndexRun[] = [];
    for await (const run of this.storeRuns(sid, MIN_TIMESTAMP, MAX_TIMESTAMP)) runs.push(run);
    const index = joinIndexes(runs.map((r) => r.index));
    for (const r of runs) r.release?.();
    const bytes = index.summaries.length + index.count * 24 + ENTRY_OVERHEAD;
    if (bytes <= this.maxBytes / INDEX_SHARE) this.keep(key, { sid, generation, bytes, index });
    return index;
  }

  /** The index from the store a batch at a time. */
  private async *storeRuns(sid: number, from: number, to: number): AsyncGenerator<IndexRun> {
    while (from <= to) {
      const index = await this.store.summaries(sid, from, to, this.indexBatch);
      const { count } = index;
      if (count === 0) return;
      // Read before the run is handed out: whoever takes it may free it.
      const next = index.last[count - 1] + 1;
      yield { index, lo: 0, hi: count, release: () => freeIndex(index) };
      if (count < this.indexBatch) return;
      from = next;
    }
  }

  private generation(sid: number): string {
    return `${this.everything}:${this.generations.get(sid) ?? 0}`;
  }

  private get(key: string, sid: number): Entry | undefined {
    const e = this.entries.get(key);
    if (e?.generation !== this.generation(sid)) {
      if (e !== undefined) this.remove(key, e);
      this.onEvent("miss");
      return undefined;
    }
    this.entries.delete(key);
    this.entries.set(key, e);
    this.onEvent("hit");
    return e;
  }

  private keep(key: string, e: Entry): void {
    if (e.generation !== this.generation(e.sid) || e.bytes > this.maxBytes) return; // written meanwhile, or too large
    const old = this.entries.get(key);
    if (old !== undefined) this.remove(key, old);
    this.entries.set(key, e);
    this.bytes += e.bytes;
    for (const [k, victim] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.remove(k, victim);
      this.onEvent("eviction");
    }
    this.onBytes(this.bytes);
  }

  private remove(key: string, e: Entry): void {
    this.entries.delete(key);
    this.bytes -= e.bytes;
    this.released.add(e.bytes);
    this.onBytes(this.bytes);
  }

  /** A write to the series was heard: what is kept of it is stale. */
  drop(sid: number): void {
    this.generations.set(sid, (this.generations.get(sid) ?? 0) + 1);
    const index = this.entries.get(`i${sid}`);
    if (index !== undefined) this.remove(`i${sid}`, index);
  }

  /** Anything may have changed. */
  dropAll(): void {
    this.everything++;
    this.generations.clear();
    for (const [k, e] of this.entries) this.remove(k, e);
  }
}

/** Frees an index read for one chart (its buffers are the reader's alone). */
function freeIndex(index: BlockIndex): void {
  for (const bytes of [index.first, index.last, index.rowid, index.summaries, index.offsets])
    freeNow(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
}

/** A payload's segments, or none for one that does not decode (a chart decodes it whole, and refuses it there). */
function segmentsOf(payload: Buffer): Buffer | undefined {
  try {
    return segmentBlock(payload, SEGMENT_ROWS);
  } catch {
    return undefined;
  }
}

/** The first i in [0, n) with a[i] >= x, or n. */
function lowerBound(a: Float64Array, x: number, n: number): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
