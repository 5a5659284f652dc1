// meridian import (D30): a CSV file into a time series, all or nothing.
import { ImportError, importCsv } from "../timeseries/import/csv-import.js";
import { parseCommand, UsageError } from "./args.js";
import { openCliBackend } from "./cli-database.js";
import { progressBar } from "./progress.js";

export const IMPORT_USAGE = `usage: meridian import --dataset ID --series ID FILE.csv
  loads a CSV (timestamp yyyy-MM-ddTHH:mm:ss[Z], then one column per data field, empty
  for missing; a first line that is not a row is a header) into an existing time series,
  all or nothing, while the server runs; prints a summary line
`;

export async function importCommand(argv: string[]): Promise<number> {
  const args = parseCommand(argv, IMPORT_USAGE, { dataset: { type: "string" }, series: { type: "string" } }, true);
  if (!args) return 0;
  const { values, positionals } = args;
  if (!values.dataset || !values.series) throw new UsageError("--dataset and --series are required", IMPORT_USAGE);
  if (positionals.length !== 1) throw new UsageError("expected one FILE.csv", IMPORT_USAGE);
  const backend = await openCliBackend("import", "existing");
  const bar = process.stderr.isTTY ? progressBar(process.stderr) : undefined;
  const started = performance.now();
  try {
    const { rows } = await importCsv(backend, { datasetId: values.dataset, seriesId: values.series, file: positionals[0], onProgress: bar?.update });
    bar?.done();
    const seconds = (performance.now() - started) / 1000;
    process.stdout.write(`imported ${rows} rows into time series ${values.series} in ${seconds.toFixed(2)} s (${Math.round(rows / seconds)} rows/s)\n`);
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
