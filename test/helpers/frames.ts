// How many frames (zstd), members (gzip) or streams (brotli) a compressed body
// holds, read from the formats themselves (RFC 8878, RFC 1952, RFC 7932), and
// where each ends: a decoder of one frame, as Python's zstandard.decompressobj
// is, reads a body of two frames as one and fails (D59).
import { brotliDecompressSync, inflateRawSync } from "node:zlib";

/** The end offsets of the frames of `body`, in order. */
export function frameEnds(coding: "zstd" | "gzip" | "br", body: Buffer): number[] {
  const ends: number[] = [];
  for (let at = 0; at < body.length;) {
    at += { zstd: zstdFrameLength, gzip: gzipMemberLength, br: brotliStreamLength }[coding](body.subarray(at));
    ends.push(at);
  }
  return ends;
}

const ZSTD_MAGIC = 0xfd2fb528;

/** Bytes of the zstd frame at the start of `b`: its header, its blocks up to the last, its checksum. */
function zstdFrameLength(b: Buffer): number {
  if (b.readUInt32LE(0) !== ZSTD_MAGIC) throw new Error("not a zstd frame");
  const fhd = b[4];
  const fcsFlag = fhd >> 6;
  const singleSegment = (fhd >> 5) & 1;
  const checksum = (fhd >> 2) & 1;
  const dictIdBytes = [0, 1, 2, 4][fhd & 3];
  const fcsBytes = [singleSegment ? 1 : 0, 2, 4, 8][fcsFlag];
  let at = 5 + (singleSegment ? 0 : 1) + dictIdBytes + fcsBytes;
  for (;;) {
    const header = b[at] | (b[at + 1] << 8) | (b[at + 2] << 16);
    const last = header & 1;
    const type = (header >> 1) & 3;
    const size = header >>> 3;
    at += 3 + (type === 1 ? 1 : size); // an RLE block holds one byte, repeated `size` times
    if (last) break;
  }
  return at + (checksum ? 4 : 0);
}

/** Bytes of the gzip member at the start of `b` (a plain header, as zlib writes it). */
function gzipMemberLength(b: Buffer): number {
  if (b[0] !== 0x1f || b[1] !== 0x8b || b[3] !== 0) throw new Error("not a gzip member with a plain header");
  const { engine } = inflateRawSync(b.subarray(10), { info: true }) as unknown as { engine: { bytesWritten: number } };
  return 10 + engine.bytesWritten + 8;
}

/** Bytes of the brotli stream at the start of `b`. */
function brotliStreamLength(b: Buffer): number {
  const { engine } = brotliDecompressSync(b, { info: true }) as unknown as { engine: { bytesWritten: number } };
  return engine.bytesWritten;
}
