// The addon's Parquet page writer (native/src/parquet-pages.*): a block's
// rows as data pages (header and zstd body each), and a row group's
// dictionary pages and statistics. Arguments are checked here, as blocks/native.ts does.
import { addon, type Taken } from "../blocks/native.js";
import type { FieldKind } from "../blocks/block-codec.js";

/** The pages of one block's rows: the timestamps', then one per block column. */
export interface BlockPages extends Taken {
  /** The pages' bytes, back to back. */
  data: Buffer;
  /** Per page: where it ends in data, its size uncompressed (header and body), its encoding. */
  pages: Uint32Array;
  /** The block's columns by kind. */
  kinds: Uint8Array;
}

/** A column's dictionary page, and statistics (PLAIN min and max of its values but NaN), for a row group. */
export interface ChunkEnd {
  dictionary: Buffer | null;
  dictionaryUncompressed: number;
  min: Buffer | null;
  max: Buffer | null;
  nulls: number;
}

interface NativePages {
  add(bytes: Uint8Array, from: number, to: number, maxRows: number): BlockPages;
  finishRowGroup(): ChunkEnd[];
}

const Native = (addon as unknown as { ParquetPages: new () => NativePages }).ParquetPages;

/** Pages of one read, a row group (of one series) at a time. */
export class ParquetPages {
  private readonly native = new Native();

  /** The block's rows of [from, to], at most maxRows, as pages of the open row group. */
  add(bytes: Uint8Array, from: number, to: number, maxRows: number): BlockPages {
    if (!(bytes instanceof Uint8Array)) throw new TypeError("ParquetPages.add: expected a Uint8Array");
    if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to))
      throw new RangeError("ParquetPages.add: from and to must be whole seconds");
    if (!(Number.isInteger(maxRows) && maxRows >= 0)) throw new RangeError("ParquetPages.add: maxRows must be a whole number >= 0");
    return this.native.add(bytes, from, to, Math.min(maxRows, 0xffff_ffff));
  }

  /** Ends the open row group: the timestamps', then each column's end. */
  finishRowGroup(): ChunkEnd[] {
    return this.native.finishRowGroup();
  }
}

export type { FieldKind };
