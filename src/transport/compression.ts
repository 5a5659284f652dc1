// Response compression on the REST paths (D44): the coding the client
// prefers by Accept-Encoding and its q-values (negotiator, the parser
// Express uses), ours in this order when it has no preference: zstd (Node 26's
// zlib), br, gzip. Small answers stay identity: compressing them costs more
// than it saves. Fast settings everywhere: a whole-range read runs at
// millions of rows a second and must not wait on its compressor. (Connect and
// gRPC-Web streams are compressed by Connect itself, by their own headers.)
import Negotiator from "negotiator";
import { promisify } from "node:util";
import * as zlib from "node:zlib";
import type { NodeRequest } from "./node-types.js";

export type Coding = "zstd" | "br" | "gzip";

/** Answers shorter than this are sent as they are. */
export const MIN_COMPRESSED_BYTES = 1024;

const OFFERED = ["zstd", "br", "gzip", "identity"];

// 256 KiB output chunks, not zlib's 16: each chunk is a round trip to libuv's
// thread pool, and at 16 KiB those trips, not the compression, set the pace.
const CHUNK = 256 * 1024;
// zstd's level 1 with level 2's shortest match (6 bytes, not 7): on W1's JSON rows 10.1% of the
// bytes instead of 12.0%, and no slower (51-54 ms against 54-58 ms for 33 MB, same run).
const ZSTD_OPTIONS = { chunkSize: CHUNK, params: { [zlib.constants.ZSTD_c_compressionLevel]: 1, [zlib.constants.ZSTD_c_minMatch]: 6 } };
const BR_OPTIONS = { chunkSize: CHUNK, params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 1 } };
const GZIP_OPTIONS = { chunkSize: CHUNK, level: 1 };

/** The coding to answer `req` in, or undefined for identity. */
export function codingFor(req: NodeRequest): Coding | undefined {
  if (req.headers["accept-encoding"] === undefined) return undefined;
  // negotiator 1.x takes the preferred order for ties; its published types are 0.6's.
  const negotiator = new Negotiator(req as never) as unknown as { encoding(available: string[], o: { preferred: string[] }): string | undefined };
  const chosen = negotiator.encoding(OFFERED, { preferred: OFFERED });
  return chosen === undefined || chosen === "identity" ? undefined : (chosen as Coding);
}

const oneShot: Record<Coding, (data: Buffer) => Promise<Buffer>> = {
  zstd: (data) => promisify(zlib.zstdCompress)(data, ZSTD_OPTIONS),
  br: (data) => promisify(zlib.brotliCompress)(data, BR_OPTIONS),
  gzip: (data) => promisify(zlib.gzip)(data, GZIP_OPTIONS),
};

/** A whole answer compressed (off the event loop, on libuv's threads). */
export function compress(coding: Coding, data: Buffer): Promise<Buffer> {
  return oneShot[coding](data);
}

/** A compressing stream for a streamed answer. */
export function compressor(coding: Coding): zlib.Gzip | zlib.BrotliCompress | zlib.ZstdCompress {
  if (coding === "zstd") return zlib.createZstdCompress(ZSTD_OPTIONS);
  return coding === "br" ? zlib.createBrotliCompress(BR_OPTIONS) : zlib.createGzip(GZIP_OPTIONS);
}
