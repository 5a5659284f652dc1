// D69: a Parquet body decoded by parquet-wasm (the Rust parquet crate
// compiled to WebAssembly: every encoding and codec the format has, bounds
// checked by construction; a hostile file traps inside the wasm sandbox,
// never in the process) into Arrow IPC, which arrow-upload.ts reads. Its
// module is compiled on the first Parquet upload (a 5 MB module: servers that
// never see Parquet do not pay for it), from the package's file, or from the
// single executable's asset (D38, release/package.mjs).
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { getAsset } from "node:sea";
import { initSync, readParquet } from "parquet-wasm/esm";
import { invalidField } from "../../kernel/errors.js";
import { inSingleExecutable } from "../../native/load.js";
import { arrowTables } from "./arrow-upload.js";
import type { DecodedTable } from "./columnar-rows.js";

/** The single executable's asset holding parquet-wasm's module. */
export const PARQUET_WASM_ASSET = "parquet_wasm_bg.wasm";

let ready = false;
function loadParquetWasm(): void {
  if (ready) return;
  const bytes = inSingleExecutable
    ? getAsset(PARQUET_WASM_ASSET)
    : readFileSync(createRequire(import.meta.url).resolve("parquet-wasm/esm/parquet_wasm_bg.wasm"));
  initSync({ module: new Uint8Array(bytes) });
  ready = true;
}

/**
 * Rows of a decoded record batch: the reader's default (1,024) makes 10,000
 * pieces of a 10M-row file, each an IPC message to write and read and a step
 * of every column's walk; a row group is at most 1M rows of our answers.
 */
const BATCH_ROWS = 1 << 17;

const MAGIC = [0x50, 0x41, 0x52, 0x31]; // "PAR1", at both ends of a file

/** The file as one table; a 400 naming why when it is not Parquet. */
export function parquetTable(body: Uint8Array, at = "body"): DecodedTable {
  const ends = body.length >= 12 && MAGIC.every((b, i) => body[i] === b && body[body.length - 4 + i] === b);
  if (!ends) throw invalidField(at, "is not a Parquet file (it must begin and end with PAR1)", "MALFORMED_BODY");
  loadParquetWasm();
  let ipc: Uint8Array;
  try {
    // intoIPCStream() consumes the wasm table: nothing of it stays in wasm memory.
    ipc = readParquet(body, { batchSize: BATCH_ROWS }).intoIPCStream();
  } catch (e) {
    throw invalidField(at, `is not a valid Parquet file: ${e instanceof Error ? e.message : String(e)}`, "MALFORMED_BODY");
  }
  const tables = arrowTables(ipc, at);
  if (tables.length !== 1) throw invalidField(at, "decoded to more than one table", "MALFORMED_BODY");
  return tables[0];
}
