// native/src/block-summary.cc: a block's summary (D65), the rows a chart bucket holding the whole block takes from it.
import { binding } from "./binding.js";
import { bytesArg } from "./range-args.js";

/** A block's summary (D65, native/src/block-summary.h). Throws for a block that does not decode. */
export function summarizeBlock(bytes: Uint8Array): Buffer {
  return binding.summarizeBlock(bytesArg("summarizeBlock", bytes));
}
