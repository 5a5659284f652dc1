// native/src/value-json.cc (and its Node-API function in addon-answers.cc): a block's rows as
// the spec's JSON rows (D25), comma separated, a leading comma unless first.
import { binding, type Taken } from "./binding.js";
import type { PooledRows, PooledWriter } from "./buffer-pool.js";
import { rowBound } from "./range-args.js";

/** The block's rows of [from, to], at most maxRows, as JSON rows in a buffer of their own. */
export function blockJson(bytes: Uint8Array, from: number, to: number, maxRows: number, first: boolean): Taken & { text: Buffer } {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-boolean-literal-compare -- the addon takes a real boolean, whatever a JavaScript caller passed
  return binding.blockJson(bytes, from, to, rowBound("blockJson", bytes, from, to, maxRows), first === true);
}

/** The same rows into a pooled buffer (D28): a chunk carrying its lease. */
export function blockJsonPooled(
  pool: PooledWriter,
  bytes: Uint8Array,
  from: number,
  to: number,
  maxRows: number,
  first: boolean,
): PooledRows {
  const max = rowBound("blockJsonPooled", bytes, from, to, maxRows);
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-boolean-literal-compare -- the addon takes a real boolean, whatever a JavaScript caller passed
  return pool.write((out) => binding.blockJsonInto(bytes, from, to, max, first === true, out));
}
