// The request target, read once before any route is chosen (D5, D8). A path
// is served only as the one path every reader of it agrees on: a proxy that
// allows or blocks by prefix, a WHATWG URL parser (which the REST transcoder
// and Connect use) and a router must not read three different paths in it.
// So what one of them would rewrite is refused rather than rewritten: a dot
// segment (`..`, `.`, plain or percent-encoded: WHATWG removes `%2e%2e` too),
// a backslash (WHATWG reads it as `/`), an encoded slash (a proxy that decodes
// it reads more segments), an empty segment (nginx merges `//`, WHATWG reads a
// leading `//` as a host) and a fragment (no request carries one). IDs never
// hold any of these (D18, D23). The query is not a path: anything goes there.
import type { ConnectError } from "@connectrpc/connect";
import { failure } from "../kernel/errors.js";
import type { NodeRequest } from "../http/node-types.js";

/**
 * Puts a request target in absolute form (`GET http://host/healthz`, which
 * RFC 9112, 3.2.2 says a server must take, as proxies send it) into origin
 * form, so that every route sees the one form, and returns the refusal of a
 * target the server does not read (a 400 MALFORMED_REQUEST), if any.
 */
export function readTarget(req: NodeRequest): ConnectError | undefined {
  const host = hostRefusal(req);
  if (host) return failure("MALFORMED_REQUEST", host);
  let target = req.url ?? "/";
  // Before the absolute form is cut: a backslash in it would end the authority elsewhere for a WHATWG reader.
  if (/\\|%5c/i.test(target.split("?", 1)[0])) return refused("a backslash");
  const absolute = /^https?:\/\/[^/?#]*/i.exec(target);
  if (absolute) {
    target = target.slice(absolute[0].length);
    if (!target.startsWith("/")) target = `/${target}`;
    req.url = target;
  }
  const path = target.split("?", 1)[0];
  if (path === "*") return undefined; // OPTIONS * (RFC 9112, 3.2.4): no path, and no route answers it
  if (!path.startsWith("/")) return failure("MALFORMED_REQUEST", "the request target is neither a path nor an absolute URL");
  if (path.includes("#")) return refused("a fragment");
  if (/%2f/i.test(path)) return refused("an encoded slash");
  const segments = path.split("/");
  for (let i = 1; i < segments.length; i++) {
    const segment = segments[i].replace(/%2e/gi, ".");
    if (segment === "." || segment === "..") return refused("a dot segment");
    // A trailing slash is a path of its own (/docs/), not a segment that two readers count differently.
    if (segment === "" && i < segments.length - 1) return refused("an empty segment");
  }
  return undefined;
}

function refused(what: string): ConnectError {
  return failure("MALFORMED_REQUEST", `the request path holds ${what}, which proxies and servers read differently`);
}

/**
 * RFC 9112, 3.2: an HTTP/1.1 request names its host, once. node:http's own
 * check (requireHostHeader, off in connection-timeouts.ts) answers a bare 400
 * with no body; this one is the problem+json every other refusal is. HTTP/1.0
 * had no Host, and HTTP/2 has :authority instead.
 */
function hostRefusal(req: NodeRequest): string | undefined {
  if (req.httpVersionMajor !== 1 || req.httpVersionMinor < 1) return undefined;
  let hosts = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i].toLowerCase() === "host") hosts++;
  if (hosts === 0) return "an HTTP/1.1 request needs a Host header";
  if (hosts > 1) return "an HTTP/1.1 request has one Host header, not several";
  return undefined;
}
