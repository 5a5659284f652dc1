// D69: a Parquet body decoded by parquet-wasm (the Rust parquet crate
// compiled to WebAssembly: every encoding and codec the format has, bounds
// checked by construction; a hostile file traps inside the wasm sandbox,
// never in the process) into Arrow IPC, which arrow-upload.ts reads. Loaded
// on the first Parquet upload: compiling its 5 MB module costs start-up
// time that servers which never see Parquet need not pay.
import { createRequire } from "node:module";
import { invalidField } from "../../core/errors.js";
import { arrowTables } from "./arrow-upload.js";
import type { DecodedTable } from "./columnar-rows.js";

interface ParquetWasm {
  readParquet(bytes: Uint8Array): { intoIPCStream(): Uint8Array; free?(): void };
}

let wasm: ParquetWasm | undefined;
function parquetWasm(): ParquetWasm {
  return (wasm ??= createRequire(import.meta.url)("parquet-wasm") as ParquetWasm);
}

const MAGIC = [0x50, 0x41, 0x52, 0x31]; // "PAR1", at both ends of a file

/** The file as one table; a 400 naming why when it is not Parquet. */
export function parquetTable(body: Uint8Array, at = "body"): DecodedTable {
  const ends = body.length >= 12 && MAGIC.every((b, i) => body[i] === b && body[body.length - 4 + i] === b);
  if (!ends) throw invalidField(at, "is not a Parquet file (it must begin and end with PAR1)", "MALFORMED_BODY");
  let ipc: Uint8Array;
  try {
    // intoIPCStream() consumes the wasm table: nothing stays in wasm memory.
    ipc = parquetWasm().readParquet(body).intoIPCStream();
  } catch (e) {
    throw invalidField(at, `is not a valid Parquet file: ${e instanceof Error ? e.message : String(e)}`, "MALFORMED_BODY");
  }
  const tables = arrowTables(ipc, at);
  if (tables.length !== 1) throw invalidField(at, "decoded to more than one table", "MALFORMED_BODY");
  return tables[0];
}
