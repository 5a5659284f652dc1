// Value reads for gRPC and Connect callers: each block's rows of the range as
// one ValuesChunk of columns (timestamps, then one packed column per data
// field), as the proto documents.
//
// Two encoders, one wire result. protobuf-es writes a packed float by
// allocating a 4-byte array per value (about 1M rows/s end to end), so for
// the binary codecs the addon writes the packed fields itself and they ride
// in the message as unknown fields, which toBinary copies as they are: the
// bytes are those toBinary would write for the declared fields. JSON codecs
// (Connect with application/json) get the fields filled the ordinary way.
import { create } from "@bufbuild/protobuf";
import { WireType } from "@bufbuild/protobuf/wire";
import type { HandlerContext } from "@connectrpc/connect";
import { blockColumns } from "../native/value-columns.js";
import { ValueColumnSchema, ValuesChunkSchema, type ValueColumn, type ValuesChunk } from "../gen/meridian/timeseries/v1/time_series_pb.js";
import { FieldKind, decodeBlock } from "./blocks/block-codec.js";
import { lowerBound } from "./blocks/row-set.js";
import type { BlockEncoder, WalkStep } from "./value-walk.js";
import type { ResumePoint } from "./value-cursor.js";

/** A block's rows of [from, to], at most maxRows, as columns (the series id is set by the caller). */
export const columnRows: BlockEncoder<ValuesChunk> = (payload, from, to, maxRows) => {
  const block = decodeBlock(payload);
  const begin = lowerBound(block.timestamps, from);
  const end = Math.max(begin, lowerBound(block.timestamps, to + 1)); // from > to: a resumed read whose to was narrowed
  const stop = Math.min(end, begin + maxRows);
  const timestamps = block.timestamps.subarray(begin, stop);
  const columns = block.columns.map((c): ValueColumn => {
    const col = create(ValueColumnSchema);
    const missing = c.missing?.subarray(begin, stop);
    if (c.kind === FieldKind.Flag) {
      col.flags = Array.from(c.values.subarray(begin, stop));
      missing?.forEach((m, i) => {
        if (!m) return;
        col.flags[i] = 0;
        col.missing.push(i);
      });
    } else {
      const values = Array.from(c.values.subarray(begin, stop));
      missing?.forEach((m, i) => m && (values[i] = NaN));
      if (c.kind === FieldKind.Single) col.singles = values;
      else col.doubles = values;
    }
    return col;
  });
  const rows = stop - begin;
  return {
    out: create(ValuesChunkSchema, { timestamps: Array.from(timestamps, BigInt), columns }),
    rows,
    last: rows > 0 ? timestamps[rows - 1] : 0,
    more: stop < end,
  };
};

/** The same chunk as columnRows, its columns written natively in wire form (for binary codecs only). */
export const wireColumnRows: BlockEncoder<ValuesChunk> = (payload, from, to, maxRows) => {
  const r = blockColumns(payload, from, to, maxRows);
  const chunk = create(ValuesChunkSchema);
  chunk.$unknown = r.parts.map((data, i) => ({ no: i === 0 ? 2 : 3, wireType: WireType.LengthDelimited, data }));
  return { out: chunk, rows: r.rows, last: r.last, more: r.more };
};

/** The encoder for the caller's codec: every protocol but JSON ones (Connect +json) serialises binary. */
export function columnEncoderFor(ctx: HandlerContext): BlockEncoder<ValuesChunk> {
  return /json/i.test(ctx.requestHeader.get("content-type") ?? "") ? columnRows : wireColumnRows;
}

/** The chunks of a read: one per block part, an empty one for a series without rows, and a last one with the cursor of a page that is not the last. */
export async function* columnChunks(
  steps: AsyncGenerator<WalkStep<ValuesChunk>, ResumePoint | undefined>,
  cursorFor: (at: ResumePoint) => string,
): AsyncGenerator<ValuesChunk> {
  let empty = true;
  let id = "";
  try {
    for (;;) {
      const step = await steps.next();
      if (step.done) {
        if (step.value) yield create(ValuesChunkSchema, { cursor: cursorFor(step.value) });
        return;
      }
      const s = step.value;
      if (s.kind === "begin") {
        empty = true;
        id = s.series.id;
      } else if (s.kind === "rows") {
        empty = false;
        s.out.timeSeriesId = id;
        yield s.out;
      } else if (empty) yield create(ValuesChunkSchema, { timeSeriesId: id });
    }
  } finally {
    await steps.return(undefined); // stopped early (the caller gone): the walk is closed too
  }
}
