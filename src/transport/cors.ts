// Browser access for the origins of MERIDIAN_CORS_ORIGINS only (D36).
import { cors as connectCors } from "@connectrpc/connect";
import { writeHead, type NodeRequest, type NodeResponse } from "../core/node-types.js";

const METHODS = ["GET", "POST", "PATCH", "DELETE"];
const HEADERS = [
  "svc-open-api-key",
  "svc-service-id",
  "svc-project-id",
  "svc-dataset-id",
  "api-version",
  "authorization",
  "content-type",
  // W3C Trace Context and Baggage (D45): what OpenTelemetry's browser instrumentation sends.
  "traceparent",
  "tracestate",
  "baggage",
  // Conditional requests (D47); resuming an event stream (D46).
  "if-match",
  "if-none-match",
  "last-event-id",
  ...connectCors.allowedHeaders.map((h) => h.toLowerCase()),
];
const EXPOSED = ["www-authenticate", "traceresponse", "etag", ...connectCors.exposedHeaders.map((h) => h.toLowerCase())];

export class Cors {
  private readonly origins: Set<string>;
  private readonly allowHeaders: string;
  /** @param extraHeaders request headers browsers may also send (MERIDIAN_CORS_HEADERS) */
  constructor(origins: readonly string[], extraHeaders: readonly string[] = []) {
    this.origins = new Set(origins);
    this.allowHeaders = [...new Set([...HEADERS, ...extraHeaders.map((h) => h.toLowerCase())])].join(", ");
  }

  /** Adds CORS headers for an allowed origin; true when the request was a preflight and is answered. */
  handle(req: NodeRequest, res: NodeResponse): boolean {
    const origin = req.headers.origin;
    if (this.origins.size === 0 || typeof origin !== "string") return false;
    res.setHeader("vary", "Origin");
    if (!this.origins.has(origin)) return false;
    res.setHeader("access-control-allow-origin", origin);
    if (req.method === "OPTIONS" && req.headers["access-control-request-method"]) {
      writeHead(res, 204, {
        "access-control-allow-methods": METHODS.join(", "),
        "access-control-allow-headers": this.allowHeaders,
        "access-control-max-age": "7200",
      });
      res.end();
      return true;
    }
    res.setHeader("access-control-expose-headers", EXPOSED.join(", "));
    return false;
  }
}
