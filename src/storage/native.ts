// The C++ addon (native/). This wrapper checks arguments so the C++ side
// only guards memory safety, as better-sqlite3 does.
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

export interface NativeColumn {
  kind: number;
  values: Float32Array | Float64Array | Int32Array;
  missing: Uint8Array | null;
}

interface NativeAddon {
  crc32c(bytes: Uint8Array): number;
  encodeBlock(timestamps: Float64Array, kinds: Uint8Array, values: NativeColumn["values"][], missing: (Uint8Array | null)[]): Buffer;
  decodeBlock(bytes: Uint8Array): { timestamps: Float64Array; columns: NativeColumn[] };
  blockColumns(bytes: Uint8Array, from: number, to: number, maxRows: number): { parts: Buffer[]; rows: number; last: number; more: boolean };
  blockJson(bytes: Uint8Array, from: number, to: number, maxRows: number, first: boolean): { text: Buffer; rows: number; last: number; more: boolean };
}

// Same depth from src/ (tests) and dist/ (built): two levels below the package root.
const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const addon = createRequire(import.meta.url)(join(root, "native", "build", "Release", "meridian_native.node")) as NativeAddon;

/** CRC-32C (Castagnoli) of the bytes. */
export function crc32c(bytes: Uint8Array): number {
  if (!(bytes instanceof Uint8Array)) throw new TypeError("crc32c: expected a Uint8Array");
  return addon.crc32c(bytes);
}
