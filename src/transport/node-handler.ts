// The one request handler behind the port: health, CORS, then the Connect
// router (gRPC, gRPC-Web, Connect on /pkg.Service/Method), then the REST
// transcoder for the paths of the spec. Every request ends in one log line (D34).
import { Code, ConnectError, createContextValues } from "@connectrpc/connect";
import type { UniversalHandler } from "@connectrpc/connect/protocol";
import { universalRequestFromNodeRequest, universalResponseToNodeResponse } from "@connectrpc/connect-node";
import type { Logger } from "../log/logger.js";
import type { Cors } from "./cors.js";
import type { HealthState } from "./health.js";
import { sendJson, sendProblem } from "./http-io.js";
import type { NodeHandler, NodeRequest, NodeResponse } from "./node-types.js";
import { requestInfoKey, type RequestInfo } from "./request-info.js";
import { Transcoder } from "./rest/transcoder.js";
import type { ServiceRegistry } from "./service-registry.js";

export interface HandlerParts {
  services: ServiceRegistry;
  shutdownSignal: AbortSignal;
  health: HealthState;
  cors: Cors;
  logger: Logger;
}

export function createNodeHandler({ services, shutdownSignal, health, cors, logger }: HandlerParts): NodeHandler {
  const rpcPaths = new Map(services.router.handlers.map((h) => [h.requestPath, h]));
  const transcoder = new Transcoder(services.methods, { interceptors: services.interceptors, shutdownSignal });

  return (req, res) => {
    const started = process.hrtime.bigint();
    const info: RequestInfo = {};
    // Path without the query string: a cursor is harmless, but nothing else there needs logging.
    const path = (req.url ?? "/").split("?", 1)[0];
    res.once("close", () => logRequest(logger, req.method, path, res, info, started));
    if (health.state === "draining" && req.httpVersionMajor === 1) res.setHeader("connection", "close");
    if (cors.handle(req, res)) return;

    if (path === "/healthz" && (req.method === "GET" || req.method === "HEAD")) {
      const ok = health.state === "serving";
      sendJson(res, ok ? 200 : 503, { status: ok ? "ok" : health.state });
      return;
    }
    const contextValues = createContextValues().set(requestInfoKey, info);
    const rpc = rpcPaths.get(path);
    if (rpc) {
      serveRpc(rpc, req, res, contextValues, logger);
      return;
    }
    transcoder.serve(req, res, contextValues).catch((e) => {
      logger.error({ err: e }, "REST request failed");
      try {
        if (!res.headersSent) sendProblem(res, new ConnectError("internal error", Code.Internal));
        else res.destroy();
      } catch {
        res.destroy();
      }
    });
  };
}

function serveRpc(rpc: UniversalHandler, req: NodeRequest, res: NodeResponse, contextValues: ReturnType<typeof createContextValues>, logger: Logger): void {
  const uReq = universalRequestFromNodeRequest(req, res, undefined, contextValues);
  rpc(uReq)
    .then((uRes) => universalResponseToNodeResponse(uRes, res))
    .catch((e) => {
      if (ConnectError.from(e).code !== Code.Aborted) logger.error({ err: e, rpc: rpc.requestPath }, "RPC failed");
    });
}

function logRequest(logger: Logger, method: string | undefined, path: string, res: NodeResponse, info: RequestInfo, started: bigint): void {
  logger.info(
    {
      method,
      path,
      status: res.statusCode,
      durationMs: Number(process.hrtime.bigint() - started) / 1e6,
      clientId: info.clientId,
      // Whether the whole response went out; false when the client left first.
      completed: res.writableFinished,
      streamedBytes: info.streamedBytes,
    },
    "request",
  );
}
