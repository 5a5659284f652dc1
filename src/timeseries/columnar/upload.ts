// D69: a columnar upload's body as the rows of its series. A single-series
// body is the columns a read answers (`timestamp`, one per data field). A
// many-series body names each row's series by a `time_series_id` column
// (Parquet, and Arrow from other tools) or, as a many-series Arrow read
// answers, by one stream per series whose schema metadata names it.
import { Vector, type Data } from "apache-arrow";
import { invalidField } from "../../kernel/errors.js";
import type { UploadBody } from "../../kernel/upload-body.js";
import { ARROW_STREAM_MEDIA_TYPE, PARQUET_MEDIA_TYPE } from "../../http/media-types.js";
import type { RowSet } from "../blocks/row-set.js";
import { arrowTables } from "./arrow-upload.js";
import { parquetTable } from "./parquet-upload.js";
import { ARROW_METADATA } from "./arrow.js";
import { ColumnProblems, SERIES_COLUMN, seriesRows, type DecodedTable, type UploadField } from "./columnar-rows.js";

export const UPLOAD_MEDIA_TYPES: readonly string[] = [ARROW_STREAM_MEDIA_TYPE, PARQUET_MEDIA_TYPE];

function tablesOf(body: UploadBody): DecodedTable[] {
  return body.mediaType === PARQUET_MEDIA_TYPE ? [parquetTable(body.bytes)] : arrowTables(body.bytes);
}

/** The rows of a single-series body, checked against the series' fields (a 400 naming every problem, up to 20). */
export function singleSeriesRows(body: UploadBody, fields: readonly UploadField[]): RowSet {
  const tables = tablesOf(body);
  if (tables.length !== 1) throw invalidField("body", `holds ${tables.length} Arrow streams; a series' upload is one`, "MALFORMED_BODY");
  const problems = new ColumnProblems();
  const rows = seriesRows(tables[0], fields, { from: 0, to: tables[0].rows }, "", problems);
  problems.list.throwIfAny();
  return rows as RowSet;
}

/** Rows of a many-series body that belong to one series (one run of them). */
export interface SeriesPart {
  id: string;
  table: DecodedTable;
  from: number;
  to: number;
  /** How problems in it are named. */
  at: string;
}

/** A many-series body cut into runs of rows of one series each, in order. */
export function manySeriesParts(body: UploadBody): SeriesPart[] {
  const parts: SeriesPart[] = [];
  tablesOf(body).forEach((table, k, all) => {
    const at = all.length > 1 ? `streams[${k}].` : "";
    const column = table.columns.get(SERIES_COLUMN);
    if (!column) {
      const id = table.schema.metadata.get(ARROW_METADATA.series);
      if (id === undefined)
        throw invalidField(
          `${at}${SERIES_COLUMN}`,
          `is missing: name each row's series by a ${SERIES_COLUMN} column (or, in Arrow, a stream's ${ARROW_METADATA.series} metadata)`,
        );
      parts.push({ id, table, from: 0, to: table.rows, at });
      return;
    }
    const ids = new Vector(column.chunks as Data[]);
    let start = 0;
    let current: unknown;
    for (let i = 0; i <= table.rows; i++) {
      const id: unknown = i < table.rows ? ids.get(i) : undefined;
      if (i < table.rows && typeof id !== "string") throw invalidField(`${at}${SERIES_COLUMN}[${i}]`, "must be a time series id (text)");
      if (i > 0 && id !== current) {
        parts.push({ id: current as string, table, from: start, to: i, at });
        start = i;
      }
      current = id;
    }
  });
  return parts;
}

/** A part's rows checked against its series' fields; problems added. */
export function partRows(part: SeriesPart, fields: readonly UploadField[], problems: ColumnProblems): RowSet | undefined {
  return seriesRows(part.table, fields, part, part.at, problems, [SERIES_COLUMN]);
}
