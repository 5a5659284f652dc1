// Reading bodies and writing JSON on the REST side (D6, D7, D8).
import { Code, type ConnectError } from "@connectrpc/connect";
import { HttpError, problemOf } from "./problem.js";
import type { NodeRequest, NodeResponse } from "./node-types.js";
import { constants as h2, type Http2ServerRequest, type Http2ServerResponse } from "node:http2";

/** What JSON answers are sent as. */
export const JSON_CONTENT_TYPE = "application/json; charset=utf-8";

/** application/json, text/json and any application/*+json, parameters ignored (D6). */
export function isJsonMediaType(header: string | undefined): boolean {
  if (!header) return false;
  const type = header.split(";", 1)[0].trim().toLowerCase();
  return type === "application/json" || type === "text/json" || (type.startsWith("application/") && type.endsWith("+json"));
}

/** Reads a whole body, refusing (413) as soon as it passes maxBytes. */
export function readBody(req: NodeRequest, maxBytes: number): Promise<Buffer> {
  const declared = Number(req.headers["content-length"] ?? NaN);
  if (declared > maxBytes) {
    req.resume();
    return Promise.reject(tooLarge(maxBytes));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        req.off("data", onData);
        req.resume();
        reject(tooLarge(maxBytes));
        return;
      }
      chunks.push(chunk);
    };
    req.on("data", onData);
    req.once("end", () => resolve(Buffer.concat(chunks, size)));
    req.once("error", reject);
    req.once("aborted", () => reject(new HttpError(400, "request aborted", Code.Canceled)));
  });
}

/**
 * For an answer given before the request body was read (a 401, a 413 on its
 * declared length): the rest of the body is not taken in. HTTP/1.1 closes the
 * connection after the answer instead of reading on to the next request;
 * HTTP/2 resets the stream with NO_ERROR once the answer is out, which tells
 * the client to stop sending (RFC 9113, 8.1).
 */
export function closeIfBodyPending(req: NodeRequest, res: NodeResponse): void {
  if (req.complete) return;
  if (req.httpVersionMajor === 1) {
    const length = req.headers["content-length"];
    if ((length === undefined || length === "0") && req.headers["transfer-encoding"] === undefined) return;
    if (!res.headersSent) res.setHeader("connection", "close");
    return;
  }
  const stream = (req as Http2ServerRequest).stream;
  if (stream.endAfterHeaders) return;
  (res as Http2ServerResponse).once("finish", () => {
    if (!stream.destroyed) stream.close(h2.NGHTTP2_NO_ERROR);
  });
}

function tooLarge(maxBytes: number): HttpError {
  return new HttpError(413, `request body larger than ${maxBytes} bytes`, Code.ResourceExhausted);
}

/** JSON whatever Accept says (D7). */
export function sendJson(res: NodeResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  sendJsonText(res, status, JSON.stringify(body), headers);
}

export function sendJsonText(res: NodeResponse, status: number, text: string, headers: Record<string, string> = {}, contentType = JSON_CONTENT_TYPE): void {
  res.writeHead(status, {
    ...headers,
    "content-type": contentType,
    "content-length": String(Buffer.byteLength(text)),
  });
  res.end(text);
}

export function sendProblem(res: NodeResponse, err: ConnectError): void {
  const problem = problemOf(err);
  const headers: Record<string, string> = {};
  for (const name of ["www-authenticate", "allow", "retry-after"]) {
    const v = err.metadata.get(name);
    if (v) headers[name] = v;
  }
  sendJsonText(res, problem.status, JSON.stringify(problem), headers, "application/problem+json; charset=utf-8");
}
