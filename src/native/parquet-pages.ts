// native/src/parquet-pages.cc: a block's rows as Parquet data pages (header
// and zstd body each), and a row group's dictionary pages and statistics.
// Arguments are checked here; the pages are written into pooled segments
// (buffer-pool.ts) whose leases this class holds and ends.
import { binding, type ChunkEnd, type RawParquetPages, type Taken } from "./binding.js";
import { lease, type Lease } from "./buffer-pool.js";

export type { ChunkEnd };

/** The pages of one block's rows: the timestamps', then one per block column. */
export interface BlockPages extends Taken {
  /** The pages' bytes, back to back (a view of a pooled segment, kept until its row group is written out). */
  data: Uint8Array;
  /** Per page: where it ends in data, its size uncompressed (header and body), its encoding. */
  pages: Uint32Array;
  /** The block's columns by kind. */
  kinds: Uint8Array;
}

/** Bytes of the pooled segments a row group's pages are written into. */
const SEGMENT_BYTES = 1 << 20;

/**
 * Pages of one read, a row group (of one series) at a time. The addon writes
 * each block's pages into pooled segments (D28) that the row group keeps
 * until it is written out (rowGroupWritten) or the answer ends (close): a
 * fresh buffer per block, kept that long, waited for a full collection, and
 * the server's memory grew with the read (16 MiB for 10M W1 rows).
 */
export class ParquetPages {
  private readonly native: RawParquetPages = new binding.ParquetPages();
  /** The open row group's segments, the last being filled. */
  private segments: Lease[] = [];
  private used = 0;
  /** Segments of row groups ended and not yet written out, oldest first. */
  private readonly ended: Lease[][] = [];

  /** The block's rows of [from, to], at most maxRows, as pages of the open row group. */
  add(bytes: Uint8Array, from: number, to: number, maxRows: number): BlockPages {
    if (!(bytes instanceof Uint8Array)) throw new TypeError("ParquetPages.add: expected a Uint8Array");
    if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to))
      throw new RangeError("ParquetPages.add: from and to must be whole seconds");
    if (!(Number.isInteger(maxRows) && maxRows >= 0)) throw new RangeError("ParquetPages.add: maxRows must be a whole number >= 0");
    let out = this.room();
    let r = this.native.add(bytes, from, to, Math.min(maxRows, 0xffff_ffff), out);
    if ("need" in r) {
      out = this.segment(r.need);
      r = this.native.take(out);
    }
    this.used += r.written;
    return { data: out.subarray(0, r.written), pages: r.pages, kinds: r.kinds, rows: r.rows, last: r.last, more: r.more };
  }

  /** Ends the open row group: the timestamps', then each column's end. Its pages stay until rowGroupWritten(). */
  finishRowGroup(): ChunkEnd[] {
    this.ended.push(this.segments);
    this.segments = [];
    this.used = 0;
    return this.native.finishRowGroup();
  }

  /** The oldest ended row group is written out: its segments go back to the pool. */
  rowGroupWritten(): void {
    for (const s of this.ended.shift() ?? []) s.release();
  }

  /** The answer is done or abandoned: every segment goes back. */
  close(): void {
    for (const group of [...this.ended, this.segments]) for (const s of group) s.release();
    this.ended.length = 0;
    this.segments = [];
    this.used = 0;
  }

  /** What is left of the last segment (empty when there is none). */
  private room(): Uint8Array {
    const last = this.segments.at(-1);
    return last ? last.buffer.subarray(this.used) : EMPTY;
  }

  private segment(bytes: number): Uint8Array {
    const s = lease(Math.max(SEGMENT_BYTES, bytes));
    this.segments.push(s);
    this.used = 0;
    return s.buffer;
  }
}

const EMPTY = new Uint8Array(0);
