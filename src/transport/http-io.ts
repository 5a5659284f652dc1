// Reading bodies and writing JSON on the REST side (D6, D7, D8).
import { Code, type ConnectError } from "@connectrpc/connect";
import { HttpError, problemOf } from "./problem.js";
import type { NodeRequest, NodeResponse } from "./node-types.js";

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
