// The addon's answer writers (native/src/addon-answers.cc): a block's rows
// written into a buffer from the pool (D28) as JSON rows or as an Arrow record
// batch (D64), and the Arrow stream's other messages. Arguments are checked
// here, as blocks/native.ts does for the rest of the addon.
import { addon, rowBound, type Taken } from "../blocks/native.js";
import type { Encoded } from "../value-walk.js";
import { acquire, pooledChunk, release } from "../../runtime/buffer-pool.js";
import { FieldKind } from "../blocks/block-codec.js";

type Into = Taken & { written: number };
type IntoResult = Into | { need: number };

interface AnswerAddon {
  blockJsonInto(bytes: Uint8Array, from: number, to: number, maxRows: number, first: boolean, out: Uint8Array): IntoResult;
  arrowBatchInto(bytes: Uint8Array, from: number, to: number, maxRows: number, out: Uint8Array): IntoResult;
  arrowBatchesAsync(payloads: Uint8Array[], from: number, to: number, maxRows: number, out: Uint8Array): Promise<Into>;
  arrowBatchBound(rows: number, kinds: Uint8Array): number;
  arrowSchema(names: string[], kinds: Uint8Array, metadata: [string, string][]): Buffer;
  arrowEmptyBatch(columns: number, metadata: [string, string][]): Buffer;
  arrowEndOfStream: Buffer;
}

const native = addon as unknown as AnswerAddon;

/** A block's rows as a chunk of a pooled buffer, and what they took: what the value walk takes from an encoder. */
export type PooledRows = Encoded<Uint8Array>;

/**
 * Runs a writer into a pooled buffer: the size asked last time first (blocks of
 * one read are alike), a larger one when the writer says it needs it.
 */
export class PooledWriter {
  private size = 0;

  write(into: (out: Uint8Array) => IntoResult): PooledRows {
    let buffer = acquire(this.size);
    for (;;) {
      const r = into(buffer);
      if ("written" in r) {
        return { out: pooledChunk(buffer, r.written), rows: r.rows, last: r.last, more: r.more };
      }
      release(buffer);
      this.size = r.need;
      buffer = acquire(r.need);
    }
  }
}

/** The block's rows of [from, to], at most maxRows, as JSON rows (a leading comma unless first), into a pooled buffer. */
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
  return pool.write((out) => native.blockJsonInto(bytes, from, to, max, first === true, out));
}

/** The same rows as one Arrow record batch message, into a pooled buffer. */
export function arrowBatchPooled(pool: PooledWriter, bytes: Uint8Array, from: number, to: number, maxRows: number): PooledRows {
  const max = rowBound("arrowBatchPooled", bytes, from, to, maxRows);
  return pool.write((out) => native.arrowBatchInto(bytes, from, to, max, out));
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
  const buffer = acquire(bound);
  try {
    const r = await native.arrowBatchesAsync(payloads, from, to, maxRows, buffer);
    return { out: pooledChunk(buffer, r.written), rows: r.rows, last: r.last, more: r.more };
  } catch (e) {
    release(buffer); // the worker is done with it either way
    throw e;
  }
}

/** The most bytes a block of `rows` rows of these kinds takes as a record batch message. */
export function arrowBatchBound(rows: number, kinds: Uint8Array): number {
  return native.arrowBatchBound(rows, kinds);
}

/** A data field as the Arrow schema names and types it. */
export interface ArrowColumn {
  name: string;
  kind: FieldKind;
}

/** The schema message of a stream: `timestamp`, then the columns; `metadata` as its custom metadata. */
export function arrowSchema(columns: readonly ArrowColumn[], metadata: [string, string][]): Buffer {
  if (columns.length > 255) throw new RangeError("arrowSchema: at most 255 columns");
  return native.arrowSchema(
    columns.map((c) => c.name),
    Uint8Array.from(columns, (c) => c.kind),
    metadata,
  );
}

/** A record batch of no rows whose message carries `metadata` (a page's cursor). */
export function arrowEmptyBatch(columns: number, metadata: [string, string][]): Buffer {
  return native.arrowEmptyBatch(columns, metadata);
}

/** The stream's end: a continuation marker and a zero length. */
export const ARROW_END_OF_STREAM: Uint8Array = native.arrowEndOfStream;
