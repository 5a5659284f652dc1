// One request as the server handles it (issue 40), made once at dispatch, as
// hono's Context: the request's facts, what the call learns on its way (its
// caller, the bytes it streamed, whether its client left), its outcome, and
// one finish on the response's close that writes its log line (D34) and
// counts it (D43). The interceptors and both protocols read and write this
// object, found in the call's context values under exchangeKey; nothing
// about a request is kept anywhere else.
import { constants as h2, type Http2ServerRequest } from "node:http2";
import { createContextKey, createContextValues, type ConnectError, type ContextValues } from "@connectrpc/connect";
import { authFailureKey, callerCheckKey } from "../auth/authenticate.js";
import { principalKey, type Principal } from "../auth/principal.js";
import type { Logger } from "../log/logger.js";
import type { Metrics, Protocol } from "../metrics/metrics.js";
import type { NodeRequest, NodeResponse } from "../http/node-types.js";
import { codeNameOfStatus } from "../http/problem.js";
import { traceOf } from "./trace-context.js";

/** Where a finished request is written down. */
export interface ExchangeSinks {
  logger: Logger;
  metrics?: Metrics;
}

/** Probes come every few seconds from every orchestrator and balancer: their lines are for debugging (D57). */
const PROBES = new Set(["/healthz", "/readyz"]);

export class Exchange {
  readonly started = process.hrtime.bigint();
  /** The path without the query string: a cursor is harmless, but nothing else there needs logging. */
  readonly path: string;
  /** W3C trace id of the request (D45): the caller's, or a new one; and this server's span of it. */
  readonly traceId: string;
  readonly spanId: string;
  /** The call's context values (Connect's and the transcoder's): this exchange under exchangeKey, and what the call adds. */
  readonly values: ContextValues;
  /** For the metrics (D43): the RPC ("Service/Method", or "unknown") and its protocol; none for a plain HTTP answer. */
  method?: string;
  protocol?: Protocol;
  /** The client's network address (D54), for a long-lived answer: the peer's, or X-Forwarded-For's when the peer is a trusted proxy. */
  clientAddress?: string;
  /** The caller once its credentials hold (its client id goes in the log line), or why they did not. */
  principal?: Principal;
  refusal?: ConnectError;
  /** Milliseconds spent checking the credentials (a key may be read from the database), counted against the call's wait limit (D40). */
  databaseWaitMs?: number;
  /** Body bytes of a streamed REST response handed to the socket (shows where a cut stream stopped). */
  streamedBytes?: number;
  /** The client left, cancelled or ran out of time before the call ended (D34: info, not an error). */
  cancelled = false;
  private code?: string;
  private answered?: () => string | undefined;
  private finished = false;

  /** Made once the request target is read (D8 may rewrite it): sends the trace's answer header and finishes on the response's close. */
  constructor(
    readonly req: NodeRequest,
    readonly res: NodeResponse,
    private readonly sinks: ExchangeSinks,
  ) {
    const trace = traceOf(req.headers.traceparent);
    this.traceId = trace.traceId;
    this.spanId = trace.spanId;
    this.path = (req.url ?? "/").split("?", 1)[0];
    this.values = createContextValues().set(exchangeKey, this);
    res.setHeader("traceresponse", trace.header);
    res.once("close", () => this.finish());
  }

  /** The call this request names (D43's labels), counted in flight until it finishes. */
  call(method: string, protocol: Protocol | undefined): void {
    this.method = method;
    this.protocol = protocol;
    if (protocol) this.sinks.metrics?.inFlight.inc({ protocol });
  }

  /** The credentials hold: the caller, for the handlers (D13) and, D53, how a long-lived answer asks again whether they still do. */
  admit(principal: Principal, recheck: () => Promise<unknown>): void {
    this.principal = principal;
    this.values.set(principalKey, principal).set(callerCheckKey, recheck);
  }

  /** The credentials do not hold: the protocol answers with this (the auth interceptor raises it for a call that runs). */
  refuse(refusal: ConnectError): void {
    this.refusal = refusal;
    this.values.set(authFailureKey, refusal);
  }

  /**
   * The outcome as the server decided it, a gRPC code name (D59): a refusal, the
   * REST answer, the implementation's end as the error interceptor saw it. The
   * last word stands.
   */
  settle(code: string): void {
    this.code = code;
  }

  /**
   * D59: for an RPC whose client reads its outcome from the answer itself (the
   * gRPC trailer, the Connect end message), that answer, read once it is sent.
   * It wins when it tells; a stream cut before its end tells nothing, and then
   * the settled code stands.
   */
  settleFromAnswer(read: () => string | undefined): void {
    this.answered = read;
  }

  /** The one place the outcome is decided: the answer's word, else the settled code, else the HTTP status's. */
  get outcome(): string {
    return this.answered?.() ?? this.code ?? codeNameOfStatus(this.res.statusCode);
  }

  /** On the response's close, once: one log line and one count. */
  finish(): void {
    if (this.finished) return;
    this.finished = true;
    const { logger, metrics } = this.sinks;
    const durationNs = process.hrtime.bigint() - this.started;
    const done = completed(this.req, this.res);
    (PROBES.has(this.path) ? logger.debug : logger.info).call(
      logger,
      {
        method: this.req.method,
        path: this.path,
        status: this.res.statusCode,
        durationMs: Number(durationNs) / 1e6,
        clientId: this.principal?.clientId,
        completed: done,
        traceId: this.traceId,
        spanId: this.spanId,
        streamedBytes: this.streamedBytes,
        cancelled: this.cancelled || !done ? true : undefined,
      },
      "request",
    );
    if (!metrics) return;
    const protocol = this.protocol ?? "http";
    const method = this.method ?? "none";
    if (this.protocol) metrics.inFlight.dec({ protocol });
    metrics.requests.inc({ method, protocol, code: this.outcome, status: String(this.res.statusCode) });
    metrics.duration.observe({ method, protocol }, Number(durationNs) / 1e9);
    if (this.streamedBytes) metrics.streamedBytes.inc(this.streamedBytes);
  }
}

/** The exchange of the call at hand, for the interceptors and the protocols. */
export const exchangeKey = createContextKey<Exchange | undefined>(undefined, { description: "the request's exchange" });

/** Whether the whole response went out; false when the client left first. */
function completed(req: NodeRequest, res: NodeResponse): boolean {
  if (!res.writableFinished) return false;
  // An HTTP/2 stream the client reset reports its writable side finished all the same; its reset code tells.
  return req.httpVersionMajor === 1 || (req as Http2ServerRequest).stream.rstCode === h2.NGHTTP2_NO_ERROR;
}
