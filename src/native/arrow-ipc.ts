// native/src/arrow-ipc.cc (and its Node-API functions in addon-answers.cc): the Arrow IPC
// stream's messages (D64): a block's rows as a record batch written into a pooled buffer
// (D28), a group of blocks' batches written off the event loop, the schema, an empty batch
// carrying metadata, the end-of-stream marker.
import { binding } from "./binding.js";
import { lease, type PooledRows, type PooledWriter } from "./buffer-pool.js";
import type { FieldKind } from "./block-codec.js";
import { rowBound } from "./range-args.js";

/** The block's rows of [from, to], at most maxRows, as one Arrow record batch message, into a pooled buffer. */
export function arrowBatchPooled(pool: PooledWriter, bytes: Uint8Array, from: number, to: number, maxRows: number): PooledRows {
  const max = rowBound("arrowBatchPooled", bytes, from, to, maxRows);
  return pool.write((out) => binding.arrowBatchInto(bytes, from, to, max, out));
}

/**
 * The blocks' rows of [from, to], at most maxRows in all, as their record batch messages back to
 * back, written off the event loop (a thread of libuv's pool) into a pooled buffer of `bound`
 * bytes, at least what arrowBatchBound() gives for their rows together.
 */
export async function arrowBatchesPooled(
  payloads: Uint8Array[],
  from: number,
  to: number,
  maxRows: number,
  bound: number,
): Promise<PooledRows> {
  for (const p of payloads) rowBound("arrowBatchesPooled", p, from, to, maxRows);
  const l = lease(bound);
  try {
    const r = await binding.arrowBatchesAsync(payloads, from, to, maxRows, l.buffer);
    return { out: l.chunk(r.written), rows: r.rows, last: r.last, more: r.more };
  } catch (e) {
    l.release(); // the worker is done with it either way
    throw e;
  }
}

/** The most bytes a block of `rows` rows of these kinds takes as a record batch message. */
export function arrowBatchBound(rows: number, kinds: Uint8Array): number {
  return binding.arrowBatchBound(rows, kinds);
}

/** A data field as the Arrow schema names and types it. */
export interface ArrowColumn {
  name: string;
  kind: FieldKind;
}

/** The schema message of a stream: `timestamp`, then the columns; `metadata` as its custom metadata. */
export function arrowSchema(columns: readonly ArrowColumn[], metadata: [string, string][]): Buffer {
  if (columns.length > 255) throw new RangeError("arrowSchema: at most 255 columns");
  return binding.arrowSchema(
    columns.map((c) => c.name),
    Uint8Array.from(columns, (c) => c.kind),
    metadata,
  );
}

/** A record batch of no rows whose message carries `metadata` (a page's cursor). */
export function arrowEmptyBatch(columns: number, metadata: [string, string][]): Buffer {
  return binding.arrowEmptyBatch(columns, metadata);
}

/** The stream's end: a continuation marker and a zero length. */
export const ARROW_END_OF_STREAM: Uint8Array = binding.arrowEndOfStream;
