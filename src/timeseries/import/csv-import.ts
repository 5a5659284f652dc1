// D30 `meridian import`: a CSV file (timestamp yyyy-MM-ddTHH:mm:ss[Z], then one
// column per data field, empty for missing) streamed into a time series, all
// or nothing: staged batch by batch in short transactions, then published in
// one (import/staging-sqlite.ts), so a failed or killed import leaves nothing behind
// and a server on the same file is never locked out for long (D51).
import { createReadStream, statSync } from "node:fs";
import { BLOCK_ROWS } from "../blocks/block-codec.js";
import type { MetadataStore } from "../metadata-store.js";
import type { Imports } from "./staging.js";
import { parseRowTimestamp } from "../timestamps.js";
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

export async function importCsv(into: { metadata: MetadataStore; imports: Imports }, opts: ImportOptions): Promise<{ rows: number }> {
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
    // A first line that is not a row is a header (D30).
    if (line === 1) return;
    throw new ImportError(line, problem);
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
    await staging.publish(kinds);
    return { rows: count };
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
