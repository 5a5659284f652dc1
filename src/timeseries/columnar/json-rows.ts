// JSON rows (D25) written by the addon into pooled buffers (D28): the value
// reads' JSON encoder. The framing around them is value-json.ts's.
import type { BlockEncoder } from "../value-walk.js";
import { PooledWriter } from "../../native/buffer-pool.js";
import { blockJsonPooled } from "../../native/value-json.js";

/** An encoder for one read: each block's rows as JSON text in a pooled chunk. */
export function jsonPooledRows(): BlockEncoder<Uint8Array> {
  const pool = new PooledWriter();
  return (payload, from, to, maxRows, first) => blockJsonPooled(pool, payload, from, to, maxRows, first);
}
