// Browser access (D36) for the origins of MERIDIAN_CORS_ORIGINS, and for the
// pages public keys serve (D60). A preflight carries no key (browsers send
// none with it), so it is allowed for an origin that some live public key
// serves; the answer to the call itself, which carries the key, then allows
// exactly that key's origins (any, for a key that names none): a page of
// another origin cannot read it, and the call is a 403 anyway.
import { cors as connectCors, type ConnectError } from "@connectrpc/connect";
import type { PublicKeyOrigins } from "../auth/api-keys.js";
import type { Principal } from "../auth/principal.js";
import { isPublicKey, originAdmitted } from "../auth/public-keys.js";
import { reasonOf } from "../kernel/errors.js";
import { writeHead, type NodeRequest, type NodeResponse } from "../http/node-types.js";

const METHODS = ["GET", "POST", "PATCH", "DELETE"];
/** What a public key's page calls: REST and Connect GET, Connect, gRPC-Web POST. */
const PUBLIC_KEY_METHODS = ["GET", "POST"];
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
const EXPOSED = ["www-authenticate", "traceresponse", "etag", "location", ...connectCors.exposedHeaders.map((h) => h.toLowerCase())];

export class Cors {
  private readonly origins: Set<string>;
  private readonly allowHeaders: string;
  /**
   * @param extraHeaders request headers browsers may also send (MERIDIAN_CORS_HEADERS)
   * @param publicKeyOrigins the origins live public keys serve (D60); absent, none
   */
  constructor(
    origins: readonly string[],
    extraHeaders: readonly string[] = [],
    private readonly publicKeyOrigins?: () => Promise<PublicKeyOrigins>,
  ) {
    this.origins = new Set(origins);
    this.allowHeaders = [...new Set([...HEADERS, ...extraHeaders.map((h) => h.toLowerCase())])].join(", ");
  }

  /** Adds CORS headers for an allowed origin; true when the request was a preflight and is (or will be) answered. */
  handle(req: NodeRequest, res: NodeResponse): boolean {
    const origin = req.headers.origin;
    if (typeof origin !== "string") return false;
    const listed = this.origins.has(origin);
    const preflight = req.method === "OPTIONS" && req.headers["access-control-request-method"] !== undefined;
    if (listed || this.publicKeyOrigins) res.setHeader("vary", "Origin");
    if (listed) {
      res.setHeader("access-control-allow-origin", origin);
      if (preflight) return (this.preflight(res, METHODS), true);
      res.setHeader("access-control-expose-headers", EXPOSED.join(", "));
      return false;
    }
    if (!preflight || !this.publicKeyOrigins) return false;
    // Not listed: allowed if a public key serves it, for what a public key may do.
    this.publicKeyOrigins().then(
      (served) => {
        if (served.any || served.origins.has(origin)) {
          res.setHeader("access-control-allow-origin", origin);
          this.preflight(res, PUBLIC_KEY_METHODS);
        } else this.preflight(res, undefined);
      },
      () => this.preflight(res, undefined), // the database away: no answer a browser takes as a yes
    );
    return true;
  }

  /**
   * D60: once the caller is known, a public key's answer allows exactly its
   * origins: the request's when the key serves it, none otherwise. A refused
   * credential's answer (a wrong or revoked key) is readable by the pages the
   * public keys serve, so a banner there can say why it was refused.
   */
  async forCaller(req: NodeRequest, res: NodeResponse, principal: Principal | undefined, refusal: ConnectError | undefined): Promise<void> {
    const origin = req.headers.origin;
    if (typeof origin !== "string") return;
    if (principal && isPublicKey(principal) && originAdmitted(principal.publicKey, origin)) {
      this.allow(res, origin);
      return;
    }
    if (principal ? isPublicKey(principal) : refusal && reasonOf(refusal) === "ORIGIN_NOT_ALLOWED") {
      res.removeHeader("access-control-allow-origin");
      res.removeHeader("access-control-expose-headers");
      return;
    }
    if (!principal && refusal && this.publicKeyOrigins && !res.hasHeader("access-control-allow-origin")) {
      const served = await this.publicKeyOrigins().catch(() => undefined);
      if (served && (served.any || served.origins.has(origin))) this.allow(res, origin);
    }
  }

  private allow(res: NodeResponse, origin: string): void {
    res.setHeader("vary", "Origin");
    res.setHeader("access-control-allow-origin", origin);
    res.setHeader("access-control-expose-headers", EXPOSED.join(", "));
  }

  /** The preflight's answer: the methods allowed, or none (no Access-Control-Allow-Origin: the browser refuses). */
  private preflight(res: NodeResponse, methods: readonly string[] | undefined): void {
    writeHead(
      res,
      204,
      methods
        ? {
            "access-control-allow-methods": methods.join(", "),
            "access-control-allow-headers": this.allowHeaders,
            "access-control-max-age": "7200",
          }
        : {},
    );
    res.end();
  }
}
