// How the request handler serves a call, whatever its protocol (issue 40): each
// protocol says whether a request is its own and names the method it calls
// (before anything reads the body: the credentials are checked in between,
// D51), then either refuses it in its own form or serves it. Connect's router
// (gRPC, gRPC-Web, Connect on /pkg.Service/Method) and the REST transcoder
// (the paths of google.api.http) are the two.
import type { DescMethod } from "@bufbuild/protobuf";
import type { ConnectError } from "@connectrpc/connect";
import type { Protocol as ProtocolLabel } from "../metrics/metrics.js";
import type { Exchange } from "./exchange.js";

/** A request a protocol takes: the method it names (none: the protocol answers that none is), and its label in the metrics. */
export interface Match<Call> {
  method?: DescMethod;
  /** D43's protocol label; none for an answer that is no call (an unknown gRPC method). */
  label?: ProtocolLabel;
  call: Call;
}

export interface Protocol<Call = unknown> {
  /** The request as this protocol's call, or undefined when it is not this protocol's. */
  match(exchange: Exchange): Match<Call> | undefined;
  /** Answers a call refused before it ran (its credentials), in the protocol's own form. */
  refuse(match: Match<Call>, exchange: Exchange, refusal: ConnectError): Promise<void> | void;
  /** Serves the call; the answer, its errors included, is the protocol's to write. */
  serve(match: Match<Call>, exchange: Exchange): Promise<void>;
}
