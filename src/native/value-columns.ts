// native/src/value-columns.cc: a block's rows as the wire payloads of a ValuesChunk's columns.
import { binding, type Taken } from "./binding.js";
import { rowBound } from "./range-args.js";

/** The block's rows of [from, to], at most maxRows, as the length-delimited wire payloads of ValuesChunk fields: [timestamps, column...], views over one buffer (native/src/value-columns.h). */
export function blockColumns(bytes: Uint8Array, from: number, to: number, maxRows: number): Taken & { parts: Uint8Array[] } {
  return binding.blockColumns(bytes, from, to, rowBound("blockColumns", bytes, from, to, maxRows));
}
