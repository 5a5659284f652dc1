// native/src/crc32c.cc: CRC-32C (Castagnoli), the checksum of the import staging files.
import { binding } from "./binding.js";
import { bytesArg } from "./range-args.js";

/** CRC-32C (Castagnoli) of the bytes. */
export function crc32c(bytes: Uint8Array): number {
  return binding.crc32c(bytesArg("crc32c", bytes));
}
