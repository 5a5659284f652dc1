// Files Meridian serves as they are (the /docs page, the banner element):
// their content type, a strict Content-Security-Policy, no sniffing.
import { writeHead, type NodeResponse } from "../http/node-types.js";

/** default-src 'none' and only this origin's scripts and styles: no inline code, no CDN. */
export const STRICT_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const TYPES = { css: "text/css; charset=utf-8", js: "text/javascript; charset=utf-8", html: "text/html; charset=utf-8" } as const;

export function sendStaticFile(res: NodeResponse, type: keyof typeof TYPES, body: Buffer, extra: Record<string, string> = {}): true {
  writeHead(res, 200, {
    "content-type": TYPES[type],
    "content-length": String(body.length),
    "content-security-policy": STRICT_CSP,
    "x-content-type-options": "nosniff",
    "cache-control": type === "html" ? "no-cache" : "public, max-age=3600",
    ...extra,
  });
  res.end(body);
  return true;
}
