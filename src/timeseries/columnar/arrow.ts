// The Apache Arrow IPC stream answer (D64). Each series is one stream: its
// schema message (the `timestamp` column, then one per data field; metadata
// naming the series and its fields), one record batch per block as the walk
// decodes them (written by the addon, native/src/arrow-ipc.*), then the
// end-of-stream marker. A many-series read sends one such stream per series,
// in the order asked, back to back: series of one read may differ in their
// fields' names, types and number, which one schema could hold only by
// widening or renaming them; each stream says which series it is. A page
// (api-version 3) that is not the last ends its last stream with a record
// batch of no rows whose message metadata holds `meridian:cursor`.
import { DATA_TYPES } from "../value-rows.js";
import type { GroupEncoder, WalkSeries } from "../value-walk.js";
import type { AnswerFormat } from "./answer-format.js";
import {
  ARROW_END_OF_STREAM,
  arrowBatchBound,
  arrowBatchesPooled,
  arrowBatchPooled,
  arrowEmptyBatch,
  arrowSchema,
} from "../../native/arrow-ipc.js";
import { PooledWriter, leaseOf } from "../../native/buffer-pool.js";

export const ARROW_MEDIA_TYPE = "application/vnd.apache.arrow.stream";

/** Schema metadata keys. */
export const ARROW_METADATA = {
  series: "meridian:time_series_id",
  fields: "meridian:data_fields",
  cursor: "meridian:cursor",
} as const;

function schemaOf(series: WalkSeries): Buffer {
  const fields = series.dataFields.map((f) => ({ name: f.name, dataType: f.dataType }));
  return arrowSchema(
    fields.map((f) => ({ name: f.name, kind: DATA_TYPES[f.dataType] })),
    [
      [ARROW_METADATA.series, series.id],
      [ARROW_METADATA.fields, JSON.stringify(fields)],
    ],
  );
}

/** Blocks' record batches a group at a time, written off the event loop (the walk overlaps them with sending). */
function arrowGroups(): GroupEncoder<Uint8Array> {
  // Per series, its kinds and its blocks' bounds by row count (a series' blocks are mostly full: one entry).
  const bySeries = new WeakMap<WalkSeries, { kinds: Uint8Array; bounds: Map<number, number> }>();
  return {
    bound(series, rows) {
      let s = bySeries.get(series);
      if (!s) bySeries.set(series, (s = { kinds: Uint8Array.from(series.dataFields, (f) => DATA_TYPES[f.dataType]), bounds: new Map() }));
      let b = s.bounds.get(rows);
      if (b === undefined) s.bounds.set(rows, (b = arrowBatchBound(rows, s.kinds)));
      return b;
    },
    encode: (blocks, from, to, maxRows, bytes) =>
      arrowBatchesPooled(
        blocks.map((b) => b.payload),
        from,
        to,
        maxRows,
        bytes,
      ),
    discard: (out) => leaseOf(out)?.release(),
  };
}

export const arrowFormat: AnswerFormat<Uint8Array> = {
  mediaType: ARROW_MEDIA_TYPE,
  contentType: ARROW_MEDIA_TYPE,
  encoders() {
    const pool = new PooledWriter();
    return {
      block: (payload, from, to, maxRows) => arrowBatchPooled(pool, payload, from, to, maxRows),
      group: arrowGroups(),
    };
  },
  async *frame(steps, shape) {
    // The open stream's end waits for the next series or the end of the walk, which may bring the cursor.
    let open: WalkSeries | undefined;
    for (;;) {
      const step = await steps.next();
      if (step.done) {
        if (open && step.value && shape.paged) {
          yield arrowEmptyBatch(open.dataFields.length, [[ARROW_METADATA.cursor, shape.cursorFor(step.value)]]);
        }
        if (open) yield ARROW_END_OF_STREAM;
        return;
      }
      const s = step.value;
      if (s.kind === "begin") {
        if (open) yield ARROW_END_OF_STREAM;
        open = s.series;
        yield schemaOf(s.series);
      } else if (s.kind === "rows") yield s.out;
    }
  },
};
