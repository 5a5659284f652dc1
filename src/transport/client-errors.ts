// D8 for what node:http refuses before a request exists: a malformed request
// line or header, headers over its limit, headers or a body that did not
// arrive in time (D51). node:http would answer a bare status line; a client
// gets the problem+json every other refusal is, and the connection closes.
import type { Duplex } from "node:stream";
import { failure } from "../core/errors.js";
import { problemOf } from "../core/problem.js";
import type { Reason } from "../core/reasons.js";

/** What node:http hands a 'clientError' listener. */
type ClientError = Error & { code?: string; rawPacket?: Buffer };

/** Answers the refusal on the socket, when nothing of an answer has gone out on it, and closes it. */
export function answerClientError(err: ClientError, socket: Duplex): void {
  // A response of this connection's request already begun: only cutting it is honest (as node:http does).
  const begun = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
  // Only HTTP's own refusals are answered: anything else (a reset, a TLS handshake that never came) just closes.
  const http = err.code === "ERR_HTTP_REQUEST_TIMEOUT" || err.code?.startsWith("HPE_") === true;
  if (!http || !socket.writable || begun) {
    socket.destroy();
    return;
  }
  const [reason, detail] = refusalOf(err);
  const problem = problemOf(failure(reason, detail));
  const body = JSON.stringify(problem);
  socket.end(
    `HTTP/1.1 ${problem.status} ${problem.title}\r\n` +
      "Content-Type: application/problem+json; charset=utf-8\r\n" +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      `Connection: close\r\n\r\n${body}`,
  );
}

/** RFC 9112, 3: a server should take request lines of at least 8,000 octets. */
const URI_MAX = 8000;

/** The request line's length in the bytes node:http was parsing (all of them when it never ends). */
function requestLineLength(packet: Buffer | undefined): number {
  if (packet === undefined) return 0;
  const end = packet.indexOf("\r\n");
  return end < 0 ? packet.length : end;
}

function refusalOf(err: ClientError): [Reason, string] {
  switch (err.code) {
    case "HPE_HEADER_OVERFLOW":
      // The limit counts the request line too: one longer than the 8,000 octets RFC 9112 (3) asks a
      // server to take, or that never ends, is a URI too long.
      return requestLineLength(err.rawPacket) > URI_MAX
        ? ["URI_TOO_LONG", "the request line is longer than the server reads"]
        : ["REQUEST_HEADERS_TOO_LARGE", "the request's headers are larger than the server reads"];
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return ["REQUEST_TIMEOUT", "the request did not arrive within the server's timeouts"];
    default:
      return ["MALFORMED_REQUEST", "the request is not well-formed HTTP/1.1"];
  }
}
