// D69: an Arrow IPC body (streams back to back, as a many-series read answers
// them; the file format too) decoded by apache-arrow: its record batches'
// buffers are views of the body, so columns reach the RowSet with one copy.
import { RecordBatchReader, type Data, type DataType } from "apache-arrow";
import { ConnectError } from "@connectrpc/connect";
import { invalidField } from "../../kernel/errors.js";
import { checkChunks, type ColumnChunks, type DecodedTable } from "./columnar-rows.js";
import { boundFlatbufferVectors } from "./flatbuffer-bounds.js";

boundFlatbufferVectors();

/** The body's streams as tables; a 400 naming why when it is not Arrow. */
export function arrowTables(body: Uint8Array, at = "body"): DecodedTable[] {
  const tables: DecodedTable[] = [];
  try {
    for (const reader of RecordBatchReader.readAll(body)) {
      const batches = [...reader];
      const schema = reader.schema;
      const columns = new Map<string, ColumnChunks>();
      schema.fields.forEach((f, i) => {
        if (columns.has(f.name)) throw invalidField(`${at}.${f.name}`, "names a column twice", "MALFORMED_BODY");
        const chunks: Data[] = batches.map((b) => b.data.children[i]);
        columns.set(f.name, { name: f.name, type: f.type as DataType, chunks });
      });
      const rows = batches.reduce((n, b) => n + b.numRows, 0);
      const where = tables.length === 0 ? "" : `streams[${tables.length}].`;
      checkChunks(columns.values(), rows, where);
      tables.push({ schema, rows, columns });
    }
  } catch (e) {
    if (e instanceof ConnectError) throw e;
    throw invalidField(at, `is not a valid Arrow IPC stream: ${(e as Error).message}`, "MALFORMED_BODY");
  }
  if (tables.length === 0) throw invalidField(at, "holds no Arrow IPC stream", "MALFORMED_BODY");
  return tables;
}
