// One request/response type for HTTP/1.1 and HTTP/2 (compat API) alike.
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";

export type NodeRequest = IncomingMessage | Http2ServerRequest;
export type NodeResponse = ServerResponse | Http2ServerResponse;
export type NodeHandler = (req: NodeRequest, res: NodeResponse) => void;

/**
 * res.writeHead(status, headers) for either kind of response. Both accept
 * this form, but @types/node 26 declares their overloads differently, so the
 * union's method is not callable as it stands.
 */
export function writeHead(res: NodeResponse, status: number, headers: OutgoingHttpHeaders): void {
  (res as ServerResponse).writeHead(status, headers);
}
