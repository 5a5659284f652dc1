// D69 `meridian import` of an Arrow (IPC stream or file) or Parquet file: the
// columns an upload takes (`timestamp`, one per data field), decoded as an
// upload decodes them, staged a batch of rows at a time and published at
// once, all or nothing, as a CSV import is (csv-import.ts). The file is read
// whole: its columns are views of those bytes.
import { openSync, readSync, closeSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { ConnectError } from "@connectrpc/connect";
import { BLOCK_ROWS } from "../blocks/block-codec.js";
import type { MetadataStore } from "../metadata-store.js";
import type { Imports } from "./staging.js";
import { kindsOf } from "../value-rows.js";
import { arrowTables } from "../columnar/arrow-upload.js";
import { parquetTable } from "../columnar/parquet-upload.js";
import { ColumnProblems, seriesRows } from "../columnar/columnar-rows.js";
import { ImportError, type ImportOptions, type ImportResult } from "./csv-import.js";

const BATCH_ROWS = BLOCK_ROWS * 16;

export type FileFormat = "csv" | "arrow" | "parquet";

/** A file's format by its magic bytes (Parquet's PAR1, Arrow's ARROW1 or a stream's continuation marker), else its extension; CSV otherwise. */
export function fileFormat(file: string): FileFormat {
  const head = Buffer.alloc(6);
  const fd = openSync(file, "r");
  try {
    readSync(fd, head, 0, 6, 0);
  } finally {
    closeSync(fd);
  }
  if (head.toString("latin1", 0, 4) === "PAR1") return "parquet";
  if (head.toString("latin1") === "ARROW1" || head.readUInt32LE(0) === 0xffffffff) return "arrow";
  if (/\.parquet$/i.test(file)) return "parquet";
  if (/\.(arrow|arrows|ipc|feather)$/i.test(file)) return "arrow";
  return "csv";
}

/** The decoder's 400 as an import error naming the same columns and rows. */
function asImportError(e: unknown): unknown {
  if (!(e instanceof ConnectError)) return e;
  const named = e.details.flatMap((d) => {
    const v = "value" in d ? (d.value as { fieldViolations?: { field: string; description: string }[] }) : {};
    return (v.fieldViolations ?? []).map((f) => `${f.field} ${f.description}`);
  });
  return new ImportError(0, named.length > 0 ? named.join("; ") : e.rawMessage);
}

function problemsError(problems: ColumnProblems): unknown {
  try {
    problems.list.throwIfAny();
  } catch (e) {
    return e;
  }
  return new ImportError(0, "the file's columns do not fit the series");
}

export async function importColumnar(
  into: { metadata: MetadataStore; imports: Imports },
  opts: ImportOptions,
  format: "arrow" | "parquet",
): Promise<ImportResult> {
  const series = await into.metadata.getSeries(opts.datasetId.toLowerCase(), opts.seriesId.toLowerCase());
  if (!series) throw new ImportError(0, `no time series ${opts.seriesId} in dataset ${opts.datasetId}`);
  const kinds = kindsOf(series.dataFields);
  const bytes = await readFile(opts.file);
  let tables;
  try {
    tables = format === "parquet" ? [parquetTable(bytes, "file")] : arrowTables(bytes, "file");
  } catch (e) {
    throw asImportError(e);
  }
  const staging = await into.imports.begin(series.sid);
  let count = 0;
  try {
    for (const [k, table] of tables.entries()) {
      for (let from = 0; from < table.rows; from += BATCH_ROWS) {
        const problems = new ColumnProblems();
        const to = Math.min(table.rows, from + BATCH_ROWS);
        const rows = seriesRows(table, series.dataFields, { from, to }, tables.length > 1 ? `streams[${k}].` : "", problems);
        if (!rows || !problems.list.empty) throw asImportError(problemsError(problems));
        await staging.stage(kinds, rows);
        count += to - from;
        opts.onProgress?.(Math.round((bytes.length * count) / Math.max(1, table.rows)), bytes.length, count);
      }
    }
    const { stored, replaced } = await staging.publish(kinds);
    return { read: count, stored, duplicatesInFile: count - stored, replacedStored: replaced };
  } catch (e) {
    try {
      await staging.discard();
    } catch {
      // Left as staged rows, which nothing reads; the next start or import removes them.
    }
    throw e;
  }
}
