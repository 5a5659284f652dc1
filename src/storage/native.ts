// The C++ addon (native/). This wrapper checks arguments so the C++ side
// only guards memory safety, as better-sqlite3 does.
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

interface NativeAddon {
  crc32c(bytes: Uint8Array): number;
}

// Same depth from src/ (tests) and dist/ (built): two levels below the package root.
const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const addon = createRequire(import.meta.url)(join(root, "native", "build", "Release", "meridian_native.node")) as NativeAddon;

/** CRC-32C (Castagnoli) of the bytes. */
export function crc32c(bytes: Uint8Array): number {
  if (!(bytes instanceof Uint8Array)) throw new TypeError("crc32c: expected a Uint8Array");
  return addon.crc32c(bytes);
}
