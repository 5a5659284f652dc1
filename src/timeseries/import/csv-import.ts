// D30 `meridian import`: a CSV file (timestamp yyyy-MM-ddTHH:mm:ss[Z], then one
// column per data field, empty for missing) streamed into a time series, all
// or nothing: staged batch by batch in short transactions, then published in
// one (sqlite/import-staging.ts), so a failed or killed import leaves nothing behind
// and a server on the same file is never locked out for long (D51).
// D58: the first line is a header only when it names the fields (isHeader);
// any other line that is not a row is an error naming it, so no row is ever
// dropped without a word, and the result says what was read and stored.
import { createReadStream, statSync } from "node:fs";
import { BLOCK_ROWS } from "../blocks/block-codec.js";
import type { MetadataStore } from "../metadata-store.js";
import type { Imports } from "./staging.js";
import { parseRowTimestamp } from "../../kernel/timestamps.js";
import { RowBuilder, cellProblem, kindsOf } from "../value-rows.js";

const BATCH_ROWS = BLOCK_ROWS * 16; // rows handed to the block store at once

export class ImportError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(line > 0 ? `line ${line}: ${message}` : message);
  }
}

export interface ImportOptions {
  datasetId: string;
  seriesId: string;
  file: string;
  /** Called now and then with bytes read of the file's total, and rows so far. */
  onProgress?: (bytesRead: number, totalBytes: number, rows: number) => void;
}

/** What an import did (D58). */
export interface ImportResult {
  /** Data rows read from the file (a header is not one). */
  read: number;
  /** Rows the series holds from the file: one per distinct timestamp. */
  stored: number;
  /** Rows of the file replaced by a later line with the same timestamp (read - stored). */
  duplicatesInFile: number;
  /** Rows the series held before that the file's rows replaced. */
  replacedStored: number;
}

export async function importCsv(into: { metadata: MetadataStore; imports: Imports }, opts: ImportOptions): Promise<ImportResult> {
  const series = await into.metadata.getSeries(opts.datasetId.toLowerCase(), opts.seriesId.toLowerCase());
  if (!series) throw new ImportError(0, `no time series ${opts.seriesId} in dataset ${opts.datasetId}`);
  const kinds = kindsOf(series.dataFields);
  const rows = new RowBuilder(kinds, BATCH_ROWS);
  const total = statSync(opts.file).size;
  let line = 0;
  let count = 0;
  let bytes = 0;

  /** Parses one line into the builder; returns a problem instead of throwing, for the header rule. */
  const parseLine = (text: string): string | undefined => {
    let end = text.indexOf(",");
    if (end === -1) end = text.length;
    const t = parseRowTimestamp(text, end);
    if (t === undefined) return "the timestamp must read yyyy-MM-ddTHH:mm:ss, optionally with Z, between 0001 and 9999";
    const at = rows.push(t);
    let start = end + 1;
    for (let c = 0; c < kinds.length; c++) {
      if (start > text.length) return `expected ${kinds.length} value(s) after the timestamp`;
      let stop = text.indexOf(",", start);
      if (stop === -1) stop = text.length;
      if (stop > start) {
        const x = Number(text.slice(start, stop));
        const why = cellProblem(kinds[c], x);
        if (why) return `column ${c + 2} ${why}`;
        rows.set(at, c, x);
      }
      start = stop + 1;
    }
    if (start <= text.length) return `expected ${kinds.length} value(s) after the timestamp, found more`;
    return undefined;
  };

  const handle = (l: string): void => {
    if (l === "") return;
    const before = rows.size;
    const problem = parseLine(l);
    if (problem === undefined) return;
    rows.size = before; // drop the half-read row
    if (line === 1 && isHeader(l, series.dataFields)) return;
    throw new ImportError(line, line === 1 ? `${problem}; nor is it a header (${headerRule(series.dataFields)})` : problem);
  };

  // One batch is staged while the next is parsed (PostgreSQL works on its own
  // core meanwhile); batches are staged in file order, so later rows still win.
  let staged: Promise<void> = Promise.resolve();
  const flush = async (): Promise<void> => {
    if (rows.size === 0) return;
    count += rows.size;
    const batch = rows.take();
    await staged;
    staged = Promise.resolve(staging.stage(kinds, batch));
    staged.catch(() => {}); // seen by the next await of it
  };

  const staging = await into.imports.begin(series.sid);
  try {
    let rest = "";
    for await (const chunk of createReadStream(opts.file, { encoding: "latin1", highWaterMark: 1 << 20 })) {
      bytes += (chunk as string).length;
      const text = rest + (chunk as string);
      let pos = 0;
      let nl: number;
      while ((nl = text.indexOf("\n", pos)) !== -1) {
        line++;
        const l = text.charCodeAt(nl - 1) === 13 ? text.slice(pos, nl - 1) : text.slice(pos, nl);
        pos = nl + 1;
        handle(l);
      }
      rest = text.slice(pos);
      if (rows.size >= BATCH_ROWS) await flush();
      opts.onProgress?.(bytes, total, count + rows.size);
    }
    if (rest !== "") {
      line++;
      handle(rest);
    }
    await flush();
    await staged;
    const { stored, replaced } = await staging.publish(kinds);
    return { read: count, stored, duplicatesInFile: count - stored, replacedStored: replaced };
  } catch (e) {
    try {
      await staged.catch(() => {});
      await staging.discard();
    } catch {
      // Left as staged rows, which nothing reads; the next start or import removes them.
    }
    throw e;
  }
}

/**
 * D58: a first line is a header when it names the columns: a name for the
 * timestamp (any cell that starts with a letter: exporters say time,
 * timestamp, Date...), then exactly the series' data field names in order.
 * Cells are compared trimmed, without surrounding double quotes, ignoring
 * case; a UTF-8 byte order mark before the line is ignored. Anything else
 * that is not a row is an error, not a header, so no row is dropped unseen.
 * `latin1` is how the file is read: the line's bytes, decoded here as UTF-8.
 */
function isHeader(latin1: string, fields: readonly { name: string }[]): boolean {
  const cells = Buffer.from(latin1, "latin1")
    .toString("utf8")
    .replace(/^\uFEFF/, "")
    .split(",")
    .map(headerCell);
  return cells.length === fields.length + 1 && /^\p{L}/u.test(cells[0]) && fields.every((f, i) => cells[i + 1] === headerCell(f.name));
}

function headerCell(text: string): string {
  const t = text.trim();
  return (t.length >= 2 && t.startsWith('"') && t.endsWith('"') ? t.slice(1, -1).trim() : t).toLowerCase();
}

/** The header rule, for the error of a first line that is neither a row nor a header. */
function headerRule(fields: readonly { name: string }[]): string {
  return `a header names the timestamp column, then ${fields.map((f) => f.name).join(", ")}`;
}
