// The Parquet answer (D64): one file for the whole read, written as it
// streams. Columns: `timestamp` (INT64, TIMESTAMP millis adjusted to UTC),
// then one per data field named as the field (Single FLOAT, Double DOUBLE,
// Flag INT32 its id), missing values (and NaN and infinities, as in JSON)
// as nulls; pages zstd-compressed, a
// dictionary per column chunk while it stays small, timestamps in
// DELTA_BINARY_PACKED (W1 takes about 1.4 bytes a row), statistics per
// column chunk. A many-series read is one file too (a file has one
// schema): a `time_series_id` column first, and the union of the series'
// fields by name (a name two series give different types is the first's;
// the other's column is named `name (Type)`), null where a series lacks the
// field. A row group holds one series' rows, at most ROW_GROUP_ROWS of them
// and about ROW_GROUP_BYTES; only the row group being filled is held
// (compressed), and the one sent, in a pooled buffer, until the socket takes
// it (D28). Key-value metadata
// names the series and their fields, and a page's cursor (api-version 3).
import { PARQUET_MEDIA_TYPE } from "../../http/media-types.js";
import type { ResumePoint } from "../value-cursor.js";
import type { BlockEncoder, WalkSeries, WalkStep } from "../value-walk.js";
import type { AnswerFormat, AnswerShape } from "./answer-format.js";
import { DATA_TYPES } from "../value-rows.js";
import { PARQUET_MAGIC, ParquetFile, type ParquetField } from "./parquet-file.js";
import { ParquetPages, type BlockPages, type ChunkEnd } from "../../native/parquet-pages.js";

/** At most this many rows a row group (the bound readers split work by). */
export const ROW_GROUP_ROWS = 1_000_000;
/** A row group ends after the block that takes its pages past this many bytes (wide or noisy series: D28 bounds what a read holds). */
export const ROW_GROUP_BYTES = 1 << 20;

/** Key-value metadata keys (those of the Arrow answer, and the many-series forms). */
export const PARQUET_METADATA = {
  series: "meridian:time_series_id",
  fields: "meridian:data_fields",
  manySeries: "meridian:time_series_ids",
  cursor: "meridian:cursor",
} as const;

type Series = Pick<WalkSeries, "id" | "dataFields">;

/** What the encoder made of one block: its pages, and a row group it ended first, in order. */
export interface ParquetPart {
  pages: ParquetPages;
  events: ({ pages: BlockPages } | { ends: ChunkEnd[] })[];
}

/**
 * An encoder for one read. A series' first block ends the row group of the
 * series before; a row group that reaches ROW_GROUP_ROWS ends mid-block, one
 * past ROW_GROUP_BYTES after the block.
 */
export function parquetEncoder(): BlockEncoder<ParquetPart> {
  const pages = new ParquetPages();
  let groupRows = 0;
  let groupBytes = 0;
  const end = (events: ParquetPart["events"]) => {
    events.push({ ends: pages.finishRowGroup() });
    groupRows = groupBytes = 0;
  };
  return (payload, from, to, maxRows, first) => {
    const events: ParquetPart["events"] = [];
    if (first && groupRows > 0) end(events);
    let rows = 0;
    let last = 0;
    let more: boolean;
    let start = from;
    for (;;) {
      const r = pages.add(payload, start, to, Math.min(maxRows - rows, ROW_GROUP_ROWS - groupRows));
      more = r.more;
      if (r.rows === 0) break;
      events.push({ pages: r });
      rows += r.rows;
      groupRows += r.rows;
      groupBytes += r.data.length;
      last = r.last;
      if (groupRows === ROW_GROUP_ROWS) end(events);
      if (!more || rows === maxRows) break;
      start = last + 1;
    }
    if (groupBytes >= ROW_GROUP_BYTES) end(events);
    return { out: { pages, events }, rows, last, more };
  };
}

/** The file's fields for these series, and each series' map from its fields to them. */
export function parquetColumns(series: readonly Series[]): { fields: ParquetField[]; maps: Map<string, number[]> } {
  const fields: ParquetField[] = [];
  const byName = new Map<string, number>();
  const maps = new Map<string, number[]>();
  for (const s of series) {
    maps.set(
      s.id,
      s.dataFields.map((f) => {
        const kind = DATA_TYPES[f.dataType];
        let name = f.name;
        let at = byName.get(name);
        if (at !== undefined && fields[at].kind !== kind) {
          name = `${f.name} (${f.dataType})`;
          at = byName.get(name);
        }
        if (at === undefined) {
          at = fields.push({ name, kind }) - 1;
          byName.set(name, at);
        }
        return at;
      }),
    );
  }
  return { fields, maps };
}

/** The file's bytes as the walk goes: the magic, each row group as it ends, the footer. */
export async function* parquetFrame(
  steps: AsyncGenerator<WalkStep<ParquetPart>, ResumePoint | undefined>,
  shape: Pick<AnswerShape, "multi" | "paged" | "cursorFor"> & { series: readonly Series[] },
): AsyncGenerator<Uint8Array> {
  const series = shape.multi ? shape.series : shape.series.slice(0, 1);
  const { fields, maps } = parquetColumns(series);
  const file = new ParquetFile(fields, shape.multi);
  try {
    yield* parquetBytes(file, steps, shape, series, maps);
  } finally {
    file.close();
  }
}

async function* parquetBytes(
  file: ParquetFile,
  steps: AsyncGenerator<WalkStep<ParquetPart>, ResumePoint | undefined>,
  shape: Pick<AnswerShape, "multi" | "paged" | "cursorFor">,
  series: readonly Series[],
  maps: Map<string, number[]>,
): AsyncGenerator<Uint8Array> {
  yield PARQUET_MAGIC;
  let current: Series | undefined;
  let pages: ParquetPages | undefined;
  /** The row group's bytes, its pages' segments given back now that they are copied there. */
  const written = (p: ParquetPages, ends: ChunkEnd[]) => {
    const bytes = file.endRowGroup(ends);
    p.rowGroupWritten();
    return bytes;
  };
  try {
    for (;;) {
      const step = await steps.next();
      if (step.done) {
        if (pages && file.open) yield written(pages, pages.finishRowGroup());
        const fieldsOf = (s: Series) => s.dataFields.map((f) => ({ name: f.name, dataType: f.dataType }));
        const metadata: [string, string][] = shape.multi
          ? [
              [PARQUET_METADATA.manySeries, JSON.stringify(series.map((s) => s.id))],
              [PARQUET_METADATA.fields, JSON.stringify(series.map(fieldsOf))],
            ]
          : [
              [PARQUET_METADATA.series, series[0].id],
              [PARQUET_METADATA.fields, JSON.stringify(fieldsOf(series[0]))],
            ];
        if (step.value && shape.paged) metadata.push([PARQUET_METADATA.cursor, shape.cursorFor(step.value)]);
        yield file.footer(metadata);
        return;
      }
      const s = step.value;
      if (s.kind === "begin") current = series.find((x) => x.id === s.series.id);
      else if (s.kind === "rows") {
        pages = s.out.pages;
        for (const e of s.out.events) {
          if ("ends" in e) yield written(pages, e.ends);
          else {
            const map = current && maps.get(current.id);
            if (!current || !map) throw new Error("parquet: rows before their series began");
            file.add(e.pages, current.id, map);
          }
        }
      }
    }
  } finally {
    pages?.close(); // the answer is done or abandoned: its pages' segments go back
  }
}

export const parquetFormat: AnswerFormat<ParquetPart> = {
  mediaType: PARQUET_MEDIA_TYPE,
  contentType: PARQUET_MEDIA_TYPE,
  encoders: () => ({ block: parquetEncoder() }),
  frame: parquetFrame,
};
