// The one request handler behind the port: the request target (refused when
// readers would disagree on its path, D8), then the plain HTTP answers (CORS
// preflights, metrics, documents, health and readiness), then the protocols:
// the first that takes the request (Connect's router, then the REST
// transcoder) names its method, the credentials are checked (before any body
// is read, D51), and the protocol refuses or serves the call. Each request is
// one Exchange, made here, that ends in one log line and one count (D34, D43).
import type { DescMethod } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { isPublic, recheckOf, type Authenticator } from "../auth/authenticate.js";
import type { Logger } from "../log/logger.js";
import type { Cors } from "./cors.js";
import { failure, unauthenticated } from "../kernel/errors.js";
import { longAnswerKey } from "../kernel/long-answer.js";
import type { HealthState } from "./health.js";
import { isGrpcContentType, sendGrpcStatus } from "./grpc-status.js";
import { closeIfBodyPending, isRead, sendJson, sendJsonText, sendProblem } from "./http-io.js";
import type { NodeHandler, NodeRequest, NodeResponse } from "../http/node-types.js";
import { ClientAddress } from "../http/client-address.js";
import { outletOf } from "../http/outlet.js";
import { Transcoder } from "./rest/transcoder.js";
import { restProtocol } from "./rest/rest-protocol.js";
import type { ServiceRegistry } from "./service-registry.js";
import type { Metrics } from "../metrics/metrics.js";
import { PublicFiles } from "./public-files.js";
import { codeName } from "../kernel/reasons.js";
import { openApiDocument, type DocumentInfo } from "./rest/openapi.js";
import { readTarget } from "./request-target.js";
import { Exchange } from "./exchange.js";
import { connectProtocol } from "./connect-protocol.js";
import type { Match, Protocol } from "./protocol.js";

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
  const transcoder = new Transcoder(services.methods, {
    interceptors: services.interceptors,
    shutdownSignal,
    json: services.json,
  });
  const docs = new PublicFiles(openApiDocument(transcoder.routes, services.restDocs, apiInfo), apiInfo);
  const protocols: readonly Protocol[] = [connectProtocol(services.router.handlers, logger), restProtocol(transcoder)];

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
    const malformed = readTarget(req);
    const exchange = new Exchange(req, res, { logger, metrics });
    const { path } = exchange;
    if (malformed) return refuseTarget(exchange, malformed);
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
    // The first protocol that takes the request serves it; REST, last, takes any.
    for (const protocol of protocols) {
      const match = protocol.match(exchange);
      if (match) return call(protocol, match, exchange);
    }
  }

  function call<C>(protocol: Protocol<C>, match: Match<C>, exchange: Exchange): void {
    const { req, res, values } = exchange;
    const { method } = match;
    if (match.label) exchange.call(method ? `${method.parent.name}/${method.name}` : "unknown", match.label);
    if (method?.methodKind === "server_streaming") {
      // A long-lived answer (D54): counted per client address, and dropped if its client stops reading.
      exchange.clientAddress = clientAddress.of(req);
      values.set(longAnswerKey, { clientAddress: exchange.clientAddress, outlet: outletOf(res) });
    }
    credentials(method, exchange, authenticate)
      .then(async () => {
        const { principal, refusal } = exchange;
        await cors.forCaller(req, res, principal, refusal); // D60: a public key's origins
        if (!refusal) return protocol.serve(match, exchange);
        closeIfBodyPending(req, res); // answered without reading it: do not take in the rest
        return protocol.refuse(match, exchange, refusal);
      })
      .catch((e: unknown) => failed(e, res));
  }
}

/**
 * Resolves the caller of a non-public method from the headers alone, before
 * anything reads the body, and admits it to the exchange, or refuses it there
 * (the 401 to answer with).
 */
async function credentials(method: DescMethod | undefined, exchange: Exchange, authenticate: Authenticator): Promise<void> {
  if (!method || isPublic(method)) return; // unknown paths get their 404/405 without credentials
  const { req } = exchange;
  const header = (name: string) => {
    const v = req.headers[name];
    return Array.isArray(v) ? v.join(", ") : v;
  };
  const started = performance.now();
  try {
    const principal = await authenticate(header, method);
    exchange.databaseWaitMs = performance.now() - started;
    // D53: a long-lived answer asks again, with the same headers, whether the credential still holds.
    exchange.admit(
      principal,
      recheckOf(principal, () => authenticate(header, method)),
    );
  } catch (e) {
    exchange.refuse(ConnectError.from(e, Code.Unauthenticated));
  }
}

/**
 * D8: a target refused before any route is chosen. Over HTTP/1.1 the
 * connection then closes, as after node:http's own refusals (the request
 * is one the server does not read, so neither is what follows it); a gRPC
 * client reads only a gRPC answer, like the unknown method's.
 */
function refuseTarget(exchange: Exchange, err: ConnectError): void {
  const { req, res } = exchange;
  exchange.settle(codeName(err.code));
  if (req.httpVersionMajor === 1) res.setHeader("connection", "close");
  closeIfBodyPending(req, res);
  if (isGrpcContentType(req.headers["content-type"])) sendGrpcStatus(req, res, err);
  else sendProblem(res, err);
}
