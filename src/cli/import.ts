// meridian import (D30): a CSV file into a time series, all or nothing.
import { statSync } from "node:fs";
import { ImportError, importCsv, type ImportResult } from "../timeseries/import/csv-import.js";
import { fileFormat, importColumnar } from "../timeseries/import/columnar-import.js";
import { parseCommand, UsageError } from "./args.js";
import { openCliBackend } from "./cli-database.js";
import { progressBar } from "./progress.js";

export const IMPORT_USAGE = `usage: meridian import --dataset ID --series ID FILE.csv|FILE.arrow|FILE.parquet
  loads a CSV (timestamp yyyy-MM-ddTHH:mm:ss[Z], then one column per data field, empty
  for missing) into an existing time series, all or nothing, while the server runs.
  The first line may be a header naming the columns: any name for the timestamp, then
  the series' data field names in order (case and surrounding spaces or quotes ignored);
  any other line that is not a row is an error naming it. Of rows with one timestamp
  the last line wins. Prints a summary line: rows read, stored, duplicates replaced.
  An Arrow (IPC stream or file) or Parquet file (known by its magic bytes or extension)
  holds the columns a read answers: timestamp, then one per data field by name.
`;

export async function importCommand(argv: string[]): Promise<number> {
  const args = parseCommand(argv, IMPORT_USAGE, { dataset: { type: "string" }, series: { type: "string" } }, true);
  if (!args) return 0;
  const { values, positionals } = args;
  if (!values.dataset || !values.series) throw new UsageError("--dataset and --series are required", IMPORT_USAGE);
  if (positionals.length !== 1) throw new UsageError("expected one FILE (.csv, .arrow or .parquet)", IMPORT_USAGE);
  const backend = await openCliBackend("import", "existing");
  // In words, not as the ENOENT of an open (issue 39 item 12); after the database, whose mistakes come first.
  const kind = statSync(positionals[0], { throwIfNoEntry: false });
  if (!kind?.isFile()) {
    process.stderr.write(
      `meridian import: ${kind ? `${positionals[0]} is not a file` : `there is no file ${positionals[0]}`}; nothing was imported\n`,
    );
    await backend.close();
    return 1;
  }
  const bar = process.stderr.isTTY ? progressBar(process.stderr) : undefined;
  const started = performance.now();
  try {
    const opts = { datasetId: values.dataset, seriesId: values.series, file: positionals[0], onProgress: bar?.update };
    const format = fileFormat(positionals[0]);
    const r = format === "csv" ? await importCsv(backend, opts) : await importColumnar(backend, opts, format);
    bar?.done();
    const seconds = (performance.now() - started) / 1000;
    process.stdout.write(`${summary(values.series, r)} in ${seconds.toFixed(2)} s (${Math.round(r.read / seconds)} rows/s)\n`);
    return 0;
  } catch (e) {
    bar?.done();
    if (e instanceof ImportError || (e as { code?: string }).code === "ENOENT") {
      process.stderr.write(`meridian import: ${(e as Error).message}; nothing was imported\n`);
      return 1;
    }
    throw e;
  } finally {
    await backend.close();
  }
}

/** D58: what the import did, in words: rows read, stored, and the duplicates replaced of each kind. */
function summary(series: string, r: ImportResult): string {
  const n = (count: number, one: string, many = `${one}s`) => `${count} ${count === 1 ? one : many}`;
  return (
    `imported into time series ${series}: ${n(r.read, "row")} read, ${r.stored} stored, ` +
    `${n(r.duplicatesInFile, "duplicate")} replaced by a later line, ${n(r.replacedStored, "stored row")} replaced`
  );
}
