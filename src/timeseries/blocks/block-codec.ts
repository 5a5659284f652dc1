// Storage blocks of one time series: up to 16,536 rows, encoded and decoded by
// the C++ addon through its typed door (src/native/block-codec.ts, which
// checks what it is handed; native/src/block-codec.h documents the format).
export {
  BLOCK_ROWS,
  FieldKind,
  decodeBlock,
  encodeBlock,
  valuesArray,
  type Block,
  type Column,
  type ColumnValues,
} from "../../native/block-codec.js";
export { MAX_TIMESTAMP, MIN_TIMESTAMP } from "../../kernel/timestamps.js";
