// The REST transcoder as a protocol: it takes every request no other protocol
// took (the paths of google.api.http, and the 404 or 405 of any other), and
// answers a refusal as problem+json (D8).
import type { ConnectError } from "@connectrpc/connect";
import { codeName } from "../../kernel/reasons.js";
import { sendProblem } from "../http-io.js";
import type { Protocol } from "../protocol.js";
import type { Resolved, Transcoder } from "./transcoder.js";

export function restProtocol(transcoder: Transcoder): Protocol<Resolved> {
  return {
    match(exchange) {
      const resolved = transcoder.resolve(exchange.req);
      return { method: resolved.match.kind === "found" ? resolved.match.route.method : undefined, label: "rest", call: resolved };
    },
    refuse(_match, exchange, refusal: ConnectError) {
      exchange.settle(codeName(refusal.code));
      sendProblem(exchange.res, refusal);
    },
    serve: (match, exchange) => transcoder.serve(exchange.req, exchange.res, exchange.values, match.call),
  };
}
