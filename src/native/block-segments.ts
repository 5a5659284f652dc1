// native/src/block-segments.cc: a block cut into segments (D65), so that a chart decodes only those a bucket edge falls in.
import { binding } from "./binding.js";
import { bytesArg } from "./range-args.js";

/** Rows a block holds at most (native/src/block-codec.h kMaxBlockRows). */
const MAX_SEGMENT_ROWS = 16_536;

/**
 * A block's segments (D65, native/src/block-segments.h): the block cut into
 * segments of `segmentRows` rows, each with its summary, so that a chart
 * decodes only the segments a bucket edge falls in. Throws for a block that
 * does not decode.
 */
export function segmentBlock(bytes: Uint8Array, segmentRows: number): Buffer {
  bytesArg("segmentBlock", bytes);
  if (!(Number.isInteger(segmentRows) && segmentRows >= 1 && segmentRows <= MAX_SEGMENT_ROWS))
    throw new RangeError("segmentBlock: segmentRows must be a whole number in 1..16536 (a block's rows at most)");
  return binding.segmentBlock(bytes, segmentRows);
}
