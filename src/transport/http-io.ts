// Reading bodies and writing JSON on the REST side (D6, D7, D8).
import { Code, type ConnectError } from "@connectrpc/connect";
import { HttpError, problemOf } from "../http/problem.js";
import { writeHead, type NodeRequest, type NodeResponse } from "../http/node-types.js";
import { constants as h2, type Http2ServerRequest, type Http2ServerResponse } from "node:http2";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Readable, Transform } from "node:stream";
import { lingerAfterAnswer } from "./lingering-close.js";
import * as zlib from "node:zlib";
import { failure } from "../kernel/errors.js";
import { JSON_CONTENT_TYPE } from "../http/media-types.js";

// Content codings a REST body may arrive in (RFC 9110, 8.4). zstd where this
// Node has it (22.15+); the list is what a 415 names in Accept-Encoding.
const zstdDecompress = (zlib as { createZstdDecompress?: () => Transform }).createZstdDecompress;
const decoders: Record<string, () => Transform> = {
  gzip: () => zlib.createGunzip(),
  deflate: () => zlib.createInflate(),
  br: () => zlib.createBrotliDecompress(),
  ...(zstdDecompress ? { zstd: zstdDecompress } : {}),
};
const ACCEPTED_ENCODINGS = ["identity", ...Object.keys(decoders)].join(", ");

/**
 * Reads a whole body, inflating it as its Content-Encoding says, refusing
 * (413) as soon as the bytes received, or the bytes inflated from them, pass
 * maxBytes (D6, D51): a small compressed body cannot grow into a large one.
 */
export function readBody(req: NodeRequest, maxBytes: number): Promise<Buffer> {
  const encoding = (req.headers["content-encoding"] ?? "identity").trim().toLowerCase();
  if (encoding !== "identity" && !(encoding in decoders)) {
    req.resume();
    return Promise.reject(
      failure("UNSUPPORTED_MEDIA_TYPE", `content encoding ${encoding} is not accepted; send one of ${ACCEPTED_ENCODINGS}`, {
        headers: { "accept-encoding": ACCEPTED_ENCODINGS },
      }),
    );
  }
  const declared = Number(req.headers["content-length"] ?? NaN);
  if (declared > maxBytes) {
    req.resume();
    return Promise.reject(tooLarge(maxBytes));
  }
  if (encoding === "identity") return collect(req, req, maxBytes, (e) => e);
  const decoder = decoders[encoding]();
  // The received bytes are bounded too: a body of noise never ends in a decoder error before 413.
  let received = 0;
  req.on("data", (chunk: Buffer) => {
    received += chunk.length;
    if (received > maxBytes) decoder.destroy(tooLarge(maxBytes));
  });
  req.pipe(decoder);
  return collect(req, decoder, maxBytes, (e) =>
    e instanceof HttpError ? e : failure("MALFORMED_BODY", `request body is not valid ${encoding}`),
  );
}

/** Concatenates `source` until it ends; past maxBytes stops taking in `req` and rejects with 413. */
function collect(req: NodeRequest, source: Readable, maxBytes: number, sourceError: (e: unknown) => unknown): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        source.off("data", onData);
        if (source !== req) {
          req.unpipe();
          source.destroy();
        }
        req.resume();
        reject(tooLarge(maxBytes));
        return;
      }
      chunks.push(chunk);
    };
    source.on("data", onData);
    source.once("end", () => resolve(Buffer.concat(chunks, size)));
    source.once("error", (e) => {
      req.unpipe();
      req.resume();
      reject(sourceError(e));
    });
    req.once("error", reject);
    req.once("aborted", () => reject(new HttpError(400, "request aborted", Code.Canceled)));
  });
}

/**
 * For an answer given before the request body was read (a 401, a 413 on its
 * declared length, a refused gRPC-Web message): the rest of the body is not
 * taken in (D55). HTTP/1.1 closes the connection after the answer instead of
 * reading on to the next request, lingering so that a client still writing
 * reads the answer; HTTP/2 resets the stream with NO_ERROR once the answer is
 * out, which tells the client to stop sending (RFC 9113, 8.1).
 */
export function closeIfBodyPending(req: NodeRequest, res: NodeResponse): void {
  if (req.complete) return;
  if (req.httpVersionMajor === 1) {
    const length = req.headers["content-length"];
    if ((length === undefined || length === "0") && req.headers["transfer-encoding"] === undefined) return;
    if (res.headersSent) return;
    res.setHeader("connection", "close");
    lingerAfterAnswer(req as IncomingMessage, res as ServerResponse);
    return;
  }
  const stream = (req as Http2ServerRequest).stream;
  if (stream.endAfterHeaders) return;
  (res as Http2ServerResponse).once("finish", () => {
    if (!stream.destroyed) stream.close(h2.NGHTTP2_NO_ERROR);
  });
}

function tooLarge(maxBytes: number): ConnectError {
  return failure("BODY_TOO_LARGE", `request body larger than ${maxBytes} bytes`);
}

/**
 * The Vary of an answer that also varies on `name`. A Vary given to writeHead
 * replaces one set before, and CORS sets Vary: Origin first (D36): a shared
 * cache told only one of the two would serve one origin's answer to another.
 */
export function varyAlso(res: NodeResponse, name: string): string {
  const before = res.getHeader("vary");
  return before ? `${String(before)}, ${name}` : name;
}

/** JSON whatever Accept says (D7). */
export function sendJson(res: NodeResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  sendJsonText(res, status, JSON.stringify(body), headers);
}

export function sendJsonText(
  res: NodeResponse,
  status: number,
  text: string,
  headers: Record<string, string> = {},
  contentType = JSON_CONTENT_TYPE,
): void {
  writeHead(res, status, {
    ...headers,
    "content-type": contentType,
    "content-length": String(Buffer.byteLength(text)),
  });
  res.end(text);
}

/** A GET, or a HEAD, which is answered wherever GET is (D5: RFC 9110, 9.3.2). */
export function isRead(req: NodeRequest): boolean {
  return req.method === "GET" || req.method === "HEAD";
}

/**
 * What a cache may do with an answer its route said nothing of: a REST answer
 * (or refusal: a 404 may be for this caller only, D61) is for the caller
 * its credentials name, and they travel in a header of our own
 * (svc-open-api-key), not Authorization, so a shared cache would not know to
 * keep it from other callers (D47). The caller's own cache keeps it and asks
 * again before reuse (an ETag, where there is one, makes that a 304).
 */
export const PRIVATE = "private, no-cache";

export function sendProblem(res: NodeResponse, err: ConnectError): void {
  const problem = problemOf(err);
  const headers: Record<string, string> = { "cache-control": PRIVATE };
  for (const name of ["www-authenticate", "allow", "retry-after", "accept-encoding", "etag"]) {
    const v = err.metadata.get(name);
    if (v) headers[name] = v;
  }
  sendJsonText(res, problem.status, JSON.stringify(problem), headers, "application/problem+json; charset=utf-8");
}
