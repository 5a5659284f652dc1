// Answers in gRPC's own form for requests the router never sees (an unknown
// method): a trailers-only response, which grpc-js, grpcio and gRPC-Web
// clients all read (gRPC over HTTP/2 spec, "Trailers-Only").
import type { ConnectError } from "@connectrpc/connect";
import type { Http2ServerResponse } from "node:http2";
import { writeHead, type NodeRequest, type NodeResponse } from "../http/node-types.js";

/** application/grpc, application/grpc+proto, application/grpc-web-text... */
export function isGrpcContentType(header: string | undefined): boolean {
  return header !== undefined && /^application\/grpc(?:-web(?:-text)?)?(?:\+\w+)?\s*(?:;|$)/i.test(header);
}

export function sendGrpcStatus(req: NodeRequest, res: NodeResponse, err: ConnectError): void {
  const headers = {
    "content-type": req.headers["content-type"] ?? "application/grpc",
    "grpc-status": String(err.code),
    "grpc-message": percentEncode(err.rawMessage),
  };
  if (req.httpVersionMajor === 1) {
    writeHead(res, 200, headers);
    res.end();
    return;
  }
  // Trailers-only needs END_STREAM on the HEADERS frame itself (grpc-js reads the status only then);
  // the compat API's writeHead + end sends an empty DATA frame to end the stream instead.
  res.statusCode = 200;
  (res as Http2ServerResponse).stream.respond({ ":status": 200, ...headers }, { endStream: true });
}

/** gRPC's percent-encoding of grpc-message: bytes outside printable ASCII, and "%" itself. */
function percentEncode(text: string): string {
  let out = "";
  for (const byte of Buffer.from(text, "utf8")) {
    out += byte < 0x20 || byte > 0x7e || byte === 0x25 ? `%${byte.toString(16).toUpperCase().padStart(2, "0")}` : String.fromCharCode(byte);
  }
  return out;
}
