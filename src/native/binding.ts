// The C++ addon (native/), loaded once, and its whole export list typed here
// and nowhere else, in the manner of better-sqlite3's lib/: each C++ unit has
// one wrapper beside this file that checks its arguments, so the C++ side only
// guards memory safety. test/native/binding.test.ts holds this list to the
// exports that native/src/addon.cc registers, and to the loaded binding's.
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import type { FieldKind } from "./field-kind.js";
import { loadAddon } from "./load.js";

/** A stored block's column as the addon decodes it (a kind it checked). */
export interface RawColumn {
  kind: FieldKind;
  values: Float32Array | Float64Array | Int32Array;
  missing: Uint8Array | null;
}

/** What a read took from a block's rows of [from, to] (native/src/block-view.h). */
export interface Taken {
  rows: number;
  /** Timestamp of the last row taken (when rows > 0). */
  last: number;
  /** Whether the block holds rows of [from, to] after the last one taken. */
  more: boolean;
}

/** A writer into a caller's buffer: what it wrote and took, or (nothing written) the bytes it needs. */
export type Into = Taken & { written: number };
export type IntoResult = Into | { need: number };

/** ParquetPages.add's answer, written at the start of `out` (parquet-pages.ts). */
export type PagesWritten = Taken & { written: number; pages: Uint32Array; kinds: Uint8Array };

/** A column's dictionary page, and statistics (PLAIN min and max of its values but NaN), for a row group. */
export interface ChunkEnd {
  dictionary: Buffer | null;
  dictionaryUncompressed: number;
  min: Buffer | null;
  max: Buffer | null;
  nulls: number;
}

export interface RawChart {
  add(blocks: Uint8Array[], summaries?: Uint8Array, order?: Int32Array, segments?: (Uint8Array | undefined)[]): void;
  finish(): Buffer[];
}

export interface RawParquetPages {
  add(bytes: Uint8Array, from: number, to: number, maxRows: number, out: Uint8Array): PagesWritten | { need: number };
  take(out: Uint8Array): PagesWritten;
  finishRowGroup(): ChunkEnd[];
}

/** Every export of the addon, by the unit that defines it. */
export interface Binding {
  // crc32c.cc
  crc32c(bytes: Uint8Array): number;
  // block-codec.cc
  encodeBlock(timestamps: Float64Array, kinds: Uint8Array, values: RawColumn["values"][], missing: (Uint8Array | null)[]): Buffer;
  decodeBlock(bytes: Uint8Array): { timestamps: Float64Array; columns: RawColumn[] };
  // value-json.cc
  blockJson(bytes: Uint8Array, from: number, to: number, maxRows: number, first: boolean): Taken & { text: Buffer };
  blockJsonInto(bytes: Uint8Array, from: number, to: number, maxRows: number, first: boolean, out: Uint8Array): IntoResult;
  // value-columns.cc
  blockColumns(bytes: Uint8Array, from: number, to: number, maxRows: number): Taken & { parts: Uint8Array[] };
  // arrow-ipc.cc
  arrowBatchInto(bytes: Uint8Array, from: number, to: number, maxRows: number, out: Uint8Array): IntoResult;
  arrowBatchesAsync(payloads: Uint8Array[], from: number, to: number, maxRows: number, out: Uint8Array): Promise<Into>;
  arrowBatchBound(rows: number, kinds: Uint8Array): number;
  arrowSchema(names: string[], kinds: Uint8Array, metadata: [string, string][]): Buffer;
  arrowEmptyBatch(columns: number, metadata: [string, string][]): Buffer;
  arrowEndOfStream: Buffer;
  // block-summary.cc, block-segments.cc
  summarizeBlock(bytes: Uint8Array): Buffer;
  segmentBlock(bytes: Uint8Array, segmentRows: number): Buffer;
  // chart.cc
  Chart: new (from: number, to: number, width: number) => RawChart;
  // parquet-pages.cc
  ParquetPages: new () => RawParquetPages;
}

/** The export list: each name and what typeof gives for it. A name missing here or extra fails to compile. */
export const EXPORTS = {
  crc32c: "function",
  encodeBlock: "function",
  decodeBlock: "function",
  blockJson: "function",
  blockJsonInto: "function",
  blockColumns: "function",
  arrowBatchInto: "function",
  arrowBatchesAsync: "function",
  arrowBatchBound: "function",
  arrowSchema: "function",
  arrowEmptyBatch: "function",
  arrowEndOfStream: "object",
  summarizeBlock: "function",
  segmentBlock: "function",
  Chart: "function",
  ParquetPages: "function",
} as const satisfies Record<keyof Binding, "function" | "object">;

/** The loaded addon, refused unless it has every export of the list, of its kind. */
function checked(exports: unknown): Binding {
  if (typeof exports !== "object" || exports === null) throw new Error("the native addon exports nothing");
  const found = exports as Record<string, unknown>;
  for (const [name, kind] of Object.entries(EXPORTS)) {
    if (typeof found[name] !== kind) throw new Error(`the native addon's ${name} is not a ${kind}: an addon of another build?`);
  }
  return exports as Binding;
}

// MERIDIAN_NATIVE_ADDON names another build of the same sources: native/check.sh
// runs the addon's tests against one built with AddressSanitizer and UBSan,
// which cannot replace the release build the server uses. The single
// executable carries its own copy (load.ts).
export const binding: Binding = checked(
  loadAddon(
    "meridian_native.node",
    // Same depth from src/ (tests) and dist/ (built): two levels below the package root.
    () =>
      process.env.MERIDIAN_NATIVE_ADDON ||
      join(dirname(fileURLToPath(import.meta.url)), "..", "..", "native", "build", "Release", "meridian_native.node"),
  ),
);
