// Response compression on the REST paths (D44): the coding the client
// prefers by Accept-Encoding and its q-values (negotiator, the parser
// Express uses), ours in this order when it has no preference: zstd (Node 26's
// zlib), br, gzip. Small answers stay identity: compressing them costs more
// than it saves. Fast settings everywhere: a whole-range read runs at
// millions of rows a second and must not wait on its compressor. Connect, gRPC
// and gRPC-Web messages get the same three codings with the same settings
// (CONNECT_COMPRESSIONS), negotiated by their own headers.
import type { Compression } from "@connectrpc/connect/protocol";
import Negotiator from "negotiator";
import { promisify } from "node:util";
import * as zlib from "node:zlib";
import type { NodeRequest } from "../http/node-types.js";
import { failure } from "../kernel/errors.js";
import { freeNow } from "../native/detach.js";

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
  const negotiator = new Negotiator(req) as unknown as {
    encoding(available: string[], o: { preferred: string[] }): string | undefined;
  };
  const chosen = negotiator.encoding(OFFERED, { preferred: OFFERED });
  return chosen === undefined || chosen === "identity" ? undefined : (chosen as Coding);
}

/** What each coding does, with its settings: the one place they are chosen. */
interface CodingImpl {
  /** A whole answer compressed (off the event loop, on libuv's threads). */
  compress(data: Uint8Array): Promise<Buffer>;
  /** A whole message inflated, refused (ERR_BUFFER_TOO_LARGE) past maxOutputLength. */
  inflate(data: Uint8Array, maxOutputLength: number): Promise<Buffer>;
  /** A compressing stream for a streamed answer. */
  stream(): zlib.Gzip | zlib.BrotliCompress | zlib.ZstdCompress;
}

const zstdCompress = promisify(zlib.zstdCompress);
const zstdDecompress = promisify(zlib.zstdDecompress);
const brotliCompress = promisify(zlib.brotliCompress);
const brotliDecompress = promisify(zlib.brotliDecompress);
const gzip = promisify(zlib.gzip);
const gunzip = promisify(zlib.gunzip);

const CODINGS: Record<Coding, CodingImpl> = {
  zstd: {
    compress: (data) => zstdCompress(data, ZSTD_OPTIONS),
    inflate: (data, maxOutputLength) => zstdDecompress(data, { maxOutputLength }),
    stream: () => zlib.createZstdCompress(ZSTD_OPTIONS),
  },
  br: {
    compress: (data) => brotliCompress(data, BR_OPTIONS),
    inflate: (data, maxOutputLength) => brotliDecompress(data, { maxOutputLength }),
    stream: () => zlib.createBrotliCompress(BR_OPTIONS),
  },
  gzip: {
    compress: (data) => gzip(data, GZIP_OPTIONS),
    inflate: (data, maxOutputLength) => gunzip(data, { maxOutputLength }),
    stream: () => zlib.createGzip(GZIP_OPTIONS),
  },
};

/** A whole answer compressed (off the event loop, on libuv's threads). */
export function compress(coding: Coding, data: Uint8Array): Promise<Buffer> {
  return CODINGS[coding].compress(data);
}

/** A compressing stream for a streamed answer. */
export function compressor(coding: Coding): zlib.Gzip | zlib.BrotliCompress | zlib.ZstdCompress {
  return CODINGS[coding].stream();
}

/**
 * Sends a compressor's output to `socket` as pipe() would (pausing while the
 * socket is full), and frees each of zlib's output buffers once the socket
 * has written the last of it (D28). zlib cuts the chunks it emits out of a
 * buffer of CHUNK bytes of its own and takes a new one only once that one is
 * full, so the chunk that ends at its buffer's end is the buffer's last; write
 * callbacks come in order, so its callback means the buffer is done with.
 * Why: those buffers are garbage that V8 frees only at a collection, and a
 * compressed read writes them faster than collections come: at the peak of a
 * 10M-row zstd JSON read 29 of them (7.25 MiB) were still allocated (heaptrack),
 * against fewer for a 1M-row read, which has fewer to make.
 */
export function pipeFreeing(z: zlib.Gzip | zlib.BrotliCompress | zlib.ZstdCompress, socket: NodeJS.WritableStream): void {
  z.on("data", (chunk: Buffer) => {
    const whole = chunk.buffer;
    const last = whole.byteLength === CHUNK && chunk.byteOffset + chunk.byteLength === CHUNK;
    const more = socket.write(chunk, last ? (err?: Error | null) => err ?? freeNow(new Uint8Array(whole)) : undefined);
    if (!more) {
      z.pause();
      socket.once("drain", () => z.resume());
    }
  });
  z.once("end", () => socket.end());
}

/**
 * A coding as Connect takes it, for its messages over Connect, gRPC and gRPC-Web.
 * Connect's own gzip and br run at zlib's default levels (gzip 6, brotli 11),
 * slow enough on a values stream that a client offering br would cost the
 * server far more than the answer is worth (D51). A message that does not
 * inflate is the caller's error (InvalidArgument); one that inflates past the
 * limit is ResourceExhausted, found without inflating the rest.
 */
function connectCompression(coding: Coding): Compression {
  return {
    name: coding,
    compress: async (bytes) => arrayBacked(await compress(coding, bytes)),
    async decompress(bytes, readMaxBytes) {
      if (bytes.length === 0) return new Uint8Array(0);
      try {
        return arrayBacked(await CODINGS[coding].inflate(bytes, readMaxBytes));
      } catch (e) {
        if ((e as { code?: string }).code === "ERR_BUFFER_TOO_LARGE") {
          throw failure("BODY_TOO_LARGE", `message is larger than ${readMaxBytes} bytes once inflated`, { cause: e });
        }
        throw failure("MALFORMED_BODY", `message is not valid ${coding}`, { cause: e });
      }
    },
  };
}

/** zlib's answers own their memory; Connect wants that said in the type. */
function arrayBacked(b: Buffer): Uint8Array<ArrayBuffer> {
  return b.buffer instanceof ArrayBuffer ? (b as Uint8Array<ArrayBuffer>) : new Uint8Array(b);
}

/** The codings Connect, gRPC and gRPC-Web messages may be sent and answered in. */
export const CONNECT_COMPRESSIONS: readonly Compression[] = (Object.keys(CODINGS) as Coding[]).map(connectCompression);
