// A Parquet file written as a read streams (D64): the magic, then row groups
// as they fill, then the footer. Pages come from the addon with their
// headers, compressed (native/parquet-pages.ts); here a row group's column chunks
// are laid out one after the other when it ends, and the footer (schema, row
// groups, statistics, key-value metadata) is written last, in Thrift's
// compact protocol (parquet-thrift.ts). What the file holds in memory is the
// row group being filled, compressed.
import { constants, zstdCompressSync } from "node:zlib";
import { FieldKind } from "../blocks/block-codec.js";
import { VERSION } from "../../version.js";
import { lease } from "../../native/buffer-pool.js";
import type { BlockPages, ChunkEnd } from "../../native/parquet-pages.js";
import { binary, bool, compact, i32, i64, list, struct, type ThriftStruct } from "./parquet-thrift.js";

export const PARQUET_MAGIC = Buffer.from("PAR1");

/** Bytes that Parquet answers being written hold in row groups being filled (a row group sent is a pooled chunk: buffer-pool counts it). */
let held = 0;
export function parquetHeld(): number {
  return held;
}

// parquet.thrift's enums, the values used here.
const TYPE = { INT32: 1, INT64: 2, FLOAT: 4, DOUBLE: 5, BYTE_ARRAY: 6 } as const;
const REPETITION = { REQUIRED: 0, OPTIONAL: 1 } as const;
const CONVERTED = { UTF8: 0, TIMESTAMP_MILLIS: 9 } as const;
const ENCODING = { PLAIN: 0, RLE: 3, DELTA_BINARY_PACKED: 5, RLE_DICTIONARY: 8 } as const;
const PAGE = { DATA: 0, DICTIONARY: 2 } as const;
const ZSTD = 6;
// As the addon's pages (native/src/addon.cc): zstd level 1.
const ZSTD_OPTIONS = { params: { [constants.ZSTD_c_compressionLevel]: 1 } };

const PHYSICAL: Record<FieldKind, number> = {
  [FieldKind.Single]: TYPE.FLOAT,
  [FieldKind.Double]: TYPE.DOUBLE,
  [FieldKind.Flag]: TYPE.INT32,
};

/** A data field's column. */
export interface ParquetField {
  name: string;
  kind: FieldKind;
}

/** One column chunk being filled: its pages (header, then zstd body), sizes and encodings. */
class Chunk {
  parts: Uint8Array[] = [];
  compressed = 0;
  uncompressed = 0;
  encodings = new Set<number>();
  /** Bytes of its dictionary page (header and body), which comes first; 0 when it has none. */
  dictionaryBytes = 0;

  /** Adds a page the addon wrote (header and compressed body). */
  written(bytes: Uint8Array, uncompressed: number, encoding: number): void {
    this.parts.push(bytes);
    this.compressed += bytes.length;
    this.uncompressed += uncompressed;
    this.encodings.add(encoding);
  }

  /** Adds a page of `type` whose header has these fields after the sizes. */
  page(type: number, header: ThriftStruct, body: Uint8Array): void {
    const z = zstdCompressSync(body, ZSTD_OPTIONS);
    const h = compact([[1, i32(type)], [2, i32(body.length)], [3, i32(z.length)], ...header]);
    this.parts.push(h, z);
    if (type === PAGE.DICTIONARY) this.dictionaryBytes = h.length + z.length;
    this.compressed += h.length + z.length;
    this.uncompressed += h.length + body.length;
  }
}

/** A data page (v1) of `values` rows, nulls among them, its levels in RLE. */
function dataPage(chunk: Chunk, values: number, encoding: number, body: Uint8Array): void {
  chunk.page(
    PAGE.DATA,
    [
      [
        5,
        struct([
          [1, i32(values)],
          [2, i32(encoding)],
          [3, i32(ENCODING.RLE)],
          [4, i32(ENCODING.RLE)],
        ]),
      ],
    ],
    body,
  );
  chunk.encodings.add(encoding);
}

/** A dictionary page of `values` PLAIN values. */
function dictionaryPage(chunk: Chunk, values: number, body: Uint8Array): void {
  chunk.page(
    PAGE.DICTIONARY,
    [
      [
        7,
        struct([
          [1, i32(values)],
          [2, i32(ENCODING.PLAIN)],
        ]),
      ],
    ],
    body,
  );
  chunk.encodings.add(ENCODING.PLAIN);
}

/** Unsigned LEB128, for RLE run headers. */
function varint(v: number): number[] {
  const out: number[] = [];
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
  return out;
}

/** A data page v1 of `rows` nulls: its definition levels, one RLE run of 0, and no values. */
function nullPage(rows: number): Buffer {
  const run = [...varint(rows * 2), 0];
  const body = Buffer.alloc(4 + run.length);
  body.writeUInt32LE(run.length, 0);
  body.set(run, 4);
  return body;
}

/** The row group being filled: one series' rows. */
interface Group {
  seriesId: string;
  /** File column (after time_series_id) of each block column: 0 the timestamps, then the fields. */
  map: readonly number[];
  rows: number;
  chunks: Chunk[];
}

export class ParquetFile {
  private offset = PARQUET_MAGIC.length;
  private rows = 0;
  private readonly rowGroups: ThriftStruct[] = [];
  private group: Group | undefined;
  /** What this file adds to `held`: its open row group's pages. */
  private holding = 0;

  private hold(bytes: number): void {
    held += bytes;
    this.holding += bytes;
  }

  /** Gives back what the file holds (the answer is done or abandoned). */
  close(): void {
    held -= this.holding;
    this.holding = 0;
    this.group = undefined;
  }

  /**
   * The file's columns: `time_series_id` first when seriesColumn (a read of
   * many series), then `timestamp`, then the fields.
   */
  constructor(
    private readonly fields: readonly ParquetField[],
    private readonly seriesColumn: boolean,
  ) {}

  /** Whether a row group holds rows not yet written. */
  get open(): boolean {
    return this.group !== undefined;
  }

  /**
   * Adds a block's pages to the row group, which the first opens for the
   * series: block column c is the file's field map[c] (its index in fields).
   */
  add(pages: BlockPages, seriesId: string, map: readonly number[]): void {
    if (pages.rows === 0) return;
    // eslint-disable-next-line @typescript-eslint/no-unsafe-enum-comparison -- the pages' kinds are the addon's bytes of FieldKinds
    if (pages.kinds.length !== map.length || map.some((f, c) => this.fields[f]?.kind !== pages.kinds[c])) {
      throw new Error("corrupt block: its columns are not its series' data fields");
    }
    const g = (this.group ??= { seriesId, map, rows: 0, chunks: Array.from({ length: 1 + this.fields.length }, () => new Chunk()) });
    if (g.seriesId !== seriesId) throw new Error("ParquetFile: a row group holds one series");
    let start = 0;
    for (let p = 0; p < pages.pages.length / 3; p++) {
      const end = pages.pages[p * 3];
      const chunk = g.chunks[p === 0 ? 0 : 1 + map[p - 1]];
      chunk.written(pages.data.subarray(start, end), pages.pages[p * 3 + 1], pages.pages[p * 3 + 2]);
      this.hold(end - start);
      if (p > 0) chunk.encodings.add(ENCODING.RLE); // the definition levels
      start = end;
    }
    g.rows += pages.rows;
  }

  /**
   * Ends the row group with its columns' ends (ParquetPages.finishRowGroup):
   * its bytes, in a pooled buffer that the transport gives back once sent
   * (D28: one read's row groups reuse one buffer, rather than leave 1 MiB of
   * garbage each).
   */
  endRowGroup(ends: ChunkEnd[]): Uint8Array {
    const g = this.group;
    if (!g) throw new Error("ParquetFile: no row group is open");
    this.group = undefined;
    if (ends.length !== 1 + g.map.length) throw new Error("ParquetFile: one end per column");
    const parts: Uint8Array[] = [];
    const columns: ThriftStruct[] = [];
    const groupStart = this.offset;
    let uncompressed = 0;
    const write = (name: string, type: number, chunk: Chunk, end: ChunkEnd, dictionaryStart: number | undefined) => {
      const start = dictionaryStart ?? this.offset;
      const dataStart = start + chunk.dictionaryBytes;
      for (const p of chunk.parts) parts.push(p);
      this.offset += chunk.compressed;
      uncompressed += chunk.uncompressed;
      const statistics: ThriftStruct = [
        [3, i64(end.nulls)],
        [5, end.max ? binary(end.max) : undefined],
        [6, end.min ? binary(end.min) : undefined],
      ];
      columns.push([
        [2, i64(start)],
        [
          3,
          struct([
            [1, i32(type)],
            [
              2,
              list(
                "i32",
                [...chunk.encodings].sort((a, b) => a - b),
              ),
            ],
            [3, list("binary", [name])],
            [4, i32(ZSTD)],
            [5, i64(g.rows)],
            [6, i64(chunk.uncompressed)],
            [7, i64(chunk.compressed)],
            [9, i64(dataStart)],
            [11, dictionaryStart === undefined ? undefined : i64(dictionaryStart)],
            [12, struct(statistics)],
          ]),
        ],
      ]);
    };
    if (this.seriesColumn) {
      // One series a row group: a dictionary of its id, and every row index 0 (one RLE run, bit width 0).
      const chunk = new Chunk();
      const id = Buffer.from(g.seriesId, "utf8");
      const entry = Buffer.alloc(4 + id.length);
      entry.writeUInt32LE(id.length, 0);
      entry.set(id, 4);
      dictionaryPage(chunk, 1, entry);
      dataPage(chunk, g.rows, ENCODING.RLE_DICTIONARY, Buffer.from([0, ...varint(g.rows * 2)]));
      write(
        "time_series_id",
        TYPE.BYTE_ARRAY,
        chunk,
        { dictionary: null, dictionaryUncompressed: 0, min: id, max: id, nulls: 0 },
        this.offset,
      );
    }
    write("timestamp", TYPE.INT64, g.chunks[0], ends[0], undefined);
    const source = new Map(g.map.map((f, c) => [f, c]));
    this.fields.forEach((field, f) => {
      const c = source.get(f);
      const data = g.chunks[1 + f];
      if (c === undefined) {
        // Not a field of this series: all null.
        dataPage(data, g.rows, ENCODING.PLAIN, nullPage(g.rows));
        data.encodings.add(ENCODING.RLE);
        write(
          field.name,
          PHYSICAL[field.kind],
          data,
          { dictionary: null, dictionaryUncompressed: 0, min: null, max: null, nulls: g.rows },
          undefined,
        );
        return;
      }
      const end = ends[1 + c];
      if (end.dictionary) {
        // The dictionary page goes first: it is known only now, so the chunk's pages move behind it.
        const pages = data.parts;
        const dict = new Chunk();
        dict.written(end.dictionary, end.dictionaryUncompressed, ENCODING.PLAIN);
        dict.dictionaryBytes = end.dictionary.length;
        dict.parts.push(...pages);
        dict.compressed += data.compressed;
        dict.uncompressed += data.uncompressed;
        for (const e of data.encodings) dict.encodings.add(e);
        write(field.name, PHYSICAL[field.kind], dict, end, this.offset);
      } else write(field.name, PHYSICAL[field.kind], data, end, undefined);
    });
    this.rows += g.rows;
    this.hold(-this.holding);
    this.rowGroups.push([
      [1, list("struct", columns)],
      [2, i64(uncompressed)],
      [3, i64(g.rows)],
      [5, i64(groupStart)],
      [6, i64(this.offset - groupStart)],
    ]);
    const size = this.offset - groupStart;
    const l = lease(size);
    let at = 0;
    for (const p of parts) {
      l.buffer.set(p, at);
      at += p.length;
    }
    return l.chunk(size);
  }

  /** The footer: the file metadata, its length, the magic. */
  footer(metadata: readonly [string, string][]): Buffer {
    if (this.group) throw new Error("ParquetFile: a row group is still open");
    const leaf = (name: string, type: number, repetition: number, more: ThriftStruct = []): ThriftStruct => [
      [1, i32(type)],
      [3, i32(repetition)],
      [4, binary(name)],
      ...more,
    ];
    const schema: ThriftStruct[] = [];
    if (this.seriesColumn) {
      schema.push(
        leaf("time_series_id", TYPE.BYTE_ARRAY, REPETITION.REQUIRED, [
          [6, i32(CONVERTED.UTF8)],
          [10, struct([[1, struct([])]])],
        ]),
      );
    }
    schema.push(
      leaf("timestamp", TYPE.INT64, REPETITION.REQUIRED, [
        [6, i32(CONVERTED.TIMESTAMP_MILLIS)],
        // LogicalType TIMESTAMP: adjusted to UTC, in milliseconds.
        [
          10,
          struct([
            [
              8,
              struct([
                [1, bool(true)],
                [2, struct([[1, struct([])]])],
              ]),
            ],
          ]),
        ],
      ]),
    );
    for (const f of this.fields) schema.push(leaf(f.name, PHYSICAL[f.kind], REPETITION.OPTIONAL));
    const root: ThriftStruct = [
      [4, binary("schema")],
      [5, i32(schema.length)],
    ];
    const meta = compact([
      [1, i32(2)],
      [2, list("struct", [root, ...schema])],
      [3, i64(this.rows)],
      [4, list("struct", this.rowGroups)],
      [
        5,
        list(
          "struct",
          metadata.map(([k, v]) => [
            [1, binary(k)],
            [2, binary(v)],
          ]),
        ),
      ],
      [6, binary(`meridian version ${VERSION}`)],
      // Every column ordered by its type (min and max statistics may be trusted).
      [
        7,
        list(
          "struct",
          schema.map(() => [[1, struct([])]]),
        ),
      ],
    ]);
    const length = Buffer.alloc(4);
    length.writeUInt32LE(meta.length, 0);
    return Buffer.concat([meta, length, PARQUET_MAGIC]);
  }
}
