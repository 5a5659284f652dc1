// The Connect router as a protocol (gRPC, gRPC-Web, Connect on
// /pkg.Service/Method): a request is its own when its path is an RPC's, or
// when it speaks gRPC at all (a gRPC client understands only a gRPC answer,
// so an unknown method is answered in gRPC too: grpcio cannot parse
// problem+json). A refused call gets its error in the protocol's own form from
// the router itself: its request body, when the protocol reads one, raises
// the refusal instead of reading a byte.
import { ConnectError } from "@connectrpc/connect";
import type { UniversalHandler, UniversalServerResponse } from "@connectrpc/connect/protocol";
import { universalRequestFromNodeRequest, universalResponseToNodeResponse } from "@connectrpc/connect-node";
import { failure } from "../kernel/errors.js";
import type { Logger } from "../log/logger.js";
import type { Protocol as ProtocolLabel } from "../metrics/metrics.js";
import type { NodeRequest, NodeResponse } from "../http/node-types.js";
import { isCancellation } from "./cancellation.js";
import type { Exchange } from "./exchange.js";
import { isGrpcContentType, sendGrpcStatus } from "./grpc-status.js";
import { binaryResponseToText, isGrpcWebText, textRequestToBinary } from "./grpc-web-text.js";
import { closeIfBodyPending } from "./http-io.js";
import type { Match, Protocol } from "./protocol.js";
import { watchOutcome } from "./rpc-outcome.js";

/** The router's handler of the method, or none: an unknown method asked in gRPC. */
type Rpc = UniversalHandler | undefined;

export function connectProtocol(handlers: readonly UniversalHandler[], logger: Logger): Protocol<Rpc> {
  const rpcPaths = new Map(handlers.map((h) => [h.requestPath, h]));
  const serve = async ({ call: rpc }: Match<Rpc>, exchange: Exchange, refusal?: ConnectError): Promise<void> => {
    const { req, res } = exchange;
    if (!rpc) {
      closeIfBodyPending(req, res);
      sendGrpcStatus(req, res, failure("METHOD_NOT_FOUND", `unknown method ${exchange.path}`));
      return;
    }
    const uReq = universalRequestFromNodeRequest(req, res, undefined, exchange.values);
    const text = isGrpcWebText(uReq.header.get("content-type"));
    if (text) textRequestToBinary(uReq);
    if (refusal) uReq.body = refusingBody(refusal);
    try {
      const watched = watchOutcome(exchange.protocol ?? "connect", await rpc(uReq));
      exchange.settleFromAnswer(watched.outcome);
      const uRes = watched.res;
      await universalResponseToNodeResponse(closingIfUnread(text ? binaryResponseToText(uRes) : uRes, req, res), res);
    } catch (e) {
      // A client gone mid-answer shows in the request line as cancelled (D34).
      if (isCancellation(e, uReq.signal)) exchange.cancelled = true;
      else logger.error({ err: e, rpc: rpc.requestPath }, "RPC failed");
    }
  };
  return {
    match(exchange) {
      const rpc = rpcPaths.get(exchange.path);
      const contentType = exchange.req.headers["content-type"];
      if (rpc) return { method: rpc.method, label: labelOf(contentType), call: rpc };
      return isGrpcContentType(contentType) ? { call: undefined } : undefined;
    },
    refuse: (match, exchange, refusal) => serve(match, exchange, refusal),
    serve: (match, exchange) => serve(match, exchange),
  };
}

/** The protocol of a call to an RPC path, by its content type. */
function labelOf(contentType: string | undefined): ProtocolLabel {
  const t = (contentType ?? "").toLowerCase();
  if (t.startsWith("application/grpc-web")) return "grpc-web";
  if (t.startsWith("application/grpc")) return "grpc";
  return "connect";
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
