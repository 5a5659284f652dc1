// The one request handler behind the port: the request target (refused when
// readers would disagree on its path, D8), health and readiness, CORS, then credentials
// (before any body is read, D51), then the Connect router (gRPC, gRPC-Web,
// Connect on /pkg.Service/Method), then the REST transcoder for the paths of
// the spec. Every request ends in one log line (D34).
import type { DescMethod } from "@bufbuild/protobuf";
import { constants as h2, type Http2ServerRequest } from "node:http2";
import { Code, ConnectError, createContextValues, type ContextValues } from "@connectrpc/connect";
import type { UniversalHandler, UniversalServerResponse } from "@connectrpc/connect/protocol";
import { universalRequestFromNodeRequest, universalResponseToNodeResponse } from "@connectrpc/connect-node";
import { authFailureKey, callerCheckKey, isPublic, recheckOf, type Authenticator } from "../auth/authenticate.js";
import { principalKey } from "../auth/principal.js";
import type { Logger } from "../log/logger.js";
import { isCancellation } from "./cancellation.js";
import type { Cors } from "./cors.js";
import { failure, unauthenticated } from "../kernel/errors.js";
import type { HealthState } from "./health.js";
import { isGrpcContentType, sendGrpcStatus } from "./grpc-status.js";
import { closeIfBodyPending, isRead, sendJson, sendJsonText, sendProblem } from "./http-io.js";
import type { NodeHandler, NodeRequest, NodeResponse } from "../http/node-types.js";
import { requestInfoKey, type RequestInfo } from "../http/request-info.js";
import { ClientAddress } from "../http/client-address.js";
import { outletKey, outletOf } from "../http/outlet.js";
import { Transcoder } from "./rest/transcoder.js";
import type { ServiceRegistry } from "./service-registry.js";
import { traceOf } from "./trace-context.js";
import { binaryResponseToText, isGrpcWebText, textRequestToBinary } from "./grpc-web-text.js";
import type { Metrics, Protocol } from "../metrics/metrics.js";
import { PublicFiles } from "./public-files.js";
import { codeNameOfStatus } from "../http/problem.js";
import { codeName } from "../kernel/reasons.js";
import { watchOutcome } from "./rpc-outcome.js";
import { openApiDocument, type DocumentInfo } from "./rest/openapi.js";
import { readTarget } from "./request-target.js";

export interface HandlerParts {
  services: ServiceRegistry;
  shutdownSignal: AbortSignal;
  health: HealthState;
  cors: Cors;
  logger: Logger;
  /** Resolves credentials; absent, every method but the public ones is refused. */
  authenticate?: Authenticator;
  /** The OpenAPI document's title and version (D41). */
  apiInfo?: DocumentInfo;
  /** Counts requests (D43); `publicMetrics` also answers GET /metrics on this port. */
  metrics?: Metrics;
  publicMetrics?: boolean;
  /** Whose address a request is (D54); by default the peer's. */
  clientAddress?: ClientAddress;
}

const noCredentials: Authenticator = () => Promise.reject(unauthenticated("credentials required", "CREDENTIALS_MISSING"));

export function createNodeHandler({
  services,
  shutdownSignal,
  health,
  cors,
  logger,
  authenticate = noCredentials,
  metrics,
  publicMetrics = false,
  apiInfo = { title: "Meridian", version: "0", description: "" },
  clientAddress = new ClientAddress([]),
}: HandlerParts): NodeHandler {
  const rpcPaths = new Map(services.router.handlers.map((h) => [h.requestPath, h]));
  const transcoder = new Transcoder(services.methods, {
    interceptors: services.interceptors,
    shutdownSignal,
    json: services.json,
  });
  const docs = new PublicFiles(openApiDocument(transcoder.routes, services.restDocs, apiInfo), apiInfo);

  return (req, res) => {
    try {
      dispatch(req, res);
    } catch (e) {
      // A defect met before the first await would otherwise escape the server's
      // request event and end the process: it is one request's 500 instead.
      failed(e, res);
    }
  };

  function failed(e: unknown, res: NodeResponse): void {
    logger.error({ err: e }, "request failed");
    try {
      if (!res.headersSent) sendProblem(res, failure("INTERNAL", "internal error"));
      else res.destroy();
    } catch {
      res.destroy();
    }
  }

  function dispatch(req: NodeRequest, res: NodeResponse): void {
    const started = process.hrtime.bigint();
    const trace = traceOf(req.headers.traceparent);
    const info: RequestInfo = { traceId: trace.traceId, spanId: trace.spanId };
    res.setHeader("traceresponse", trace.header);
    const malformed = readTarget(req);
    // Path without the query string: a cursor is harmless, but nothing else there needs logging.
    const path = (req.url ?? "/").split("?", 1)[0];
    res.once("close", () => {
      logRequest(logger, req, path, res, info, started);
      if (metrics) countRequest(metrics, res, info, started);
    });
    if (malformed) return refuseTarget(req, res, malformed, info);
    if (health.state === "draining" && req.httpVersionMajor === 1) res.setHeader("connection", "close");
    if (cors.handle(req, res)) return;

    if (publicMetrics && metrics && path === "/metrics" && isRead(req)) {
      metrics.scrape().then(
        ({ text, contentType }) => sendJsonText(res, 200, text, {}, contentType),
        (e: unknown) => {
          logger.error({ err: e }, "metrics scrape failed");
          sendProblem(res, failure("INTERNAL", "internal error"));
        },
      );
      return;
    }
    if (docs.handle(req, res, path)) return;
    if (path === "/healthz" && isRead(req)) {
      const ok = health.state === "serving";
      sendJson(res, ok ? 200 : 503, { status: ok ? "ok" : health.state });
      return;
    }
    if (path === "/readyz" && isRead(req)) {
      health.notReady().then(
        (reason) =>
          reason === undefined
            ? sendJson(res, 200, { status: "ready" })
            : sendProblem(res, failure("NOT_READY", `not ready: ${reason}`, { headers: { "retry-after": "1" } })),
        (e: unknown) => failed(e, res),
      );
      return;
    }
    const contextValues = createContextValues().set(requestInfoKey, info);
    const rpc = rpcPaths.get(path);
    if (!rpc && isGrpcContentType(req.headers["content-type"])) {
      // A gRPC client understands only a gRPC answer (grpcio cannot parse problem+json).
      closeIfBodyPending(req, res);
      sendGrpcStatus(req, res, failure("METHOD_NOT_FOUND", `unknown method ${path}`));
      return;
    }
    const rest = rpc ? undefined : transcoder.resolve(req);
    const method = rpc ? rpc.method : rest?.match.kind === "found" ? rest.match.route.method : undefined;
    if (metrics) {
      info.method = method ? `${method.parent.name}/${method.name}` : "unknown";
      info.protocol = rpc ? protocolOf(req.headers["content-type"]) : "rest";
      metrics.inFlight.inc({ protocol: info.protocol });
    }
    if (method?.methodKind === "server_streaming") {
      // A long-lived answer (D54): counted per client address, and dropped if its client stops reading.
      info.clientAddress = clientAddress.of(req);
      contextValues.set(outletKey, outletOf(res));
    }

    credentials(method, req, contextValues, info, authenticate)
      .then(async (refusal) => {
        await cors.forCaller(req, res, contextValues.get(principalKey), refusal); // D60: a public key's origins
        if (refusal) closeIfBodyPending(req, res); // answered without reading it: do not take in the rest
        if (rpc) return serveRpc(rpc, req, res, contextValues, logger, refusal);
        if (refusal) {
          info.code = codeName(refusal.code);
          return sendProblem(res, refusal);
        }
        return transcoder.serve(req, res, contextValues, rest);
      })
      .catch((e: unknown) => failed(e, res));
  }
}

/**
 * Resolves the caller of a non-public method from the headers alone, before
 * anything reads the body, and keeps the principal for the handlers (and its
 * client id for the log line). Returns the 401 to answer with, if any.
 */
async function credentials(
  method: DescMethod | undefined,
  req: NodeRequest,
  contextValues: ContextValues,
  info: RequestInfo,
  authenticate: Authenticator,
): Promise<ConnectError | undefined> {
  if (!method || isPublic(method)) return undefined; // unknown paths get their 404/405 without credentials
  const header = (name: string) => {
    const v = req.headers[name];
    return Array.isArray(v) ? v.join(", ") : v;
  };
  const started = performance.now();
  try {
    const principal = await authenticate(header, method);
    info.databaseWaitMs = performance.now() - started;
    contextValues.set(principalKey, principal);
    // D53: a long-lived answer asks again, with the same headers, whether the credential still holds.
    contextValues.set(
      callerCheckKey,
      recheckOf(principal, () => authenticate(header, method)),
    );
    info.clientId = principal.clientId;
    return undefined;
  } catch (e) {
    const err = ConnectError.from(e, Code.Unauthenticated);
    contextValues.set(authFailureKey, err);
    return err;
  }
}

/**
 * Serves one call through the Connect router. A refused call gets its error
 * in the protocol's own form from the router itself: its request body, when
 * the protocol reads one, raises the refusal instead of reading a byte.
 */
async function serveRpc(
  rpc: UniversalHandler,
  req: NodeRequest,
  res: NodeResponse,
  contextValues: ContextValues,
  logger: Logger,
  refusal: ConnectError | undefined,
): Promise<void> {
  const uReq = universalRequestFromNodeRequest(req, res, undefined, contextValues);
  const text = isGrpcWebText(uReq.header.get("content-type"));
  if (text) textRequestToBinary(uReq);
  if (refusal) uReq.body = refusingBody(refusal);
  try {
    const info = contextValues.get(requestInfoKey);
    const watched = watchOutcome(info?.protocol ?? "connect", await rpc(uReq));
    if (info) info.outcome = watched.outcome;
    const uRes = watched.res;
    await universalResponseToNodeResponse(closingIfUnread(text ? binaryResponseToText(uRes) : uRes, req, res), res);
  } catch (e) {
    // A client gone mid-answer shows in the request line as cancelled (D34).
    if (isCancellation(e, uReq.signal)) {
      const info = contextValues.get(requestInfoKey);
      if (info) info.cancelled = true;
    } else logger.error({ err: e, rpc: rpc.requestPath }, "RPC failed");
  }
}

/**
 * The answer, checked as its head goes out (the router sends it after the
 * first chunk): a call answered before its request body was all read, a
 * message refused for its size say, does not leave the rest of that body to
 * be read as the connection's next request (D55).
 */
function closingIfUnread(uRes: UniversalServerResponse, req: NodeRequest, res: NodeResponse): UniversalServerResponse {
  const body = uRes.body;
  if (!body) {
    closeIfBodyPending(req, res);
    return uRes;
  }
  return {
    ...uRes,
    body: {
      [Symbol.asyncIterator]() {
        const it = body[Symbol.asyncIterator]();
        let headSent = false;
        return {
          next: async () => {
            if (headSent) return it.next();
            const first = await it.next();
            headSent = true;
            closeIfBodyPending(req, res);
            return first;
          },
          return: (value?: unknown) => it.return?.(value) ?? Promise.resolve({ done: true as const, value: undefined }),
          throw: (e?: unknown) => it.throw?.(e) ?? Promise.reject(e),
        };
      },
    },
  };
}

// eslint-disable-next-line require-yield
async function* refusingBody(err: ConnectError): AsyncIterable<Uint8Array> {
  throw err;
}

/** Whether the whole response went out; false when the client left first. */
function completed(req: NodeRequest, res: NodeResponse): boolean {
  if (!res.writableFinished) return false;
  // An HTTP/2 stream the client reset reports its writable side finished all the same; its reset code tells.
  return req.httpVersionMajor === 1 || (req as Http2ServerRequest).stream.rstCode === h2.NGHTTP2_NO_ERROR;
}

/** Probes come every few seconds from every orchestrator and balancer: their lines are for debugging (D57). */
const PROBES = new Set(["/healthz", "/readyz"]);

function logRequest(logger: Logger, req: NodeRequest, path: string, res: NodeResponse, info: RequestInfo, started: bigint): void {
  const done = completed(req, res);
  (PROBES.has(path) ? logger.debug : logger.info).call(
    logger,
    {
      method: req.method,
      path,
      status: res.statusCode,
      durationMs: Number(process.hrtime.bigint() - started) / 1e6,
      clientId: info.clientId,
      completed: done,
      traceId: info.traceId,
      spanId: info.spanId,
      streamedBytes: info.streamedBytes,
      cancelled: info.cancelled === true || !done ? true : undefined,
    },
    "request",
  );
}

/** The protocol of a call to an RPC path, by its content type. */
function protocolOf(contentType: string | undefined): Protocol {
  const t = (contentType ?? "").toLowerCase();
  if (t.startsWith("application/grpc-web")) return "grpc-web";
  if (t.startsWith("application/grpc")) return "grpc";
  return "connect";
}

/** One request in the metrics (D43): its count by code, its duration, and the streams it held. */
function countRequest(metrics: Metrics, res: NodeResponse, info: RequestInfo, started: bigint): void {
  const protocol = info.protocol ?? "http";
  const method = info.method ?? "none";
  if (info.protocol) metrics.inFlight.dec({ protocol });
  const code = info.outcome?.() ?? info.code ?? codeNameOfStatus(res.statusCode);
  metrics.requests.inc({ method, protocol, code, status: String(res.statusCode) });
  metrics.duration.observe({ method, protocol }, Number(process.hrtime.bigint() - started) / 1e9);
  if (info.streamedBytes) metrics.streamedBytes.inc(info.streamedBytes);
}

/**
 * D8: a target refused before any route is chosen. Over HTTP/1.1 the
 * connection then closes, as after node:http's own refusals (the request
 * is one the server does not read, so neither is what follows it); a gRPC
 * client reads only a gRPC answer, like the unknown method's.
 */
function refuseTarget(req: NodeRequest, res: NodeResponse, err: ConnectError, info: RequestInfo): void {
  info.code = codeName(err.code);
  if (req.httpVersionMajor === 1) res.setHeader("connection", "close");
  closeIfBodyPending(req, res);
  if (isGrpcContentType(req.headers["content-type"])) sendGrpcStatus(req, res, err);
  else sendProblem(res, err);
}
