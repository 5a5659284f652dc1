// D8 for what node:http refuses before a request exists: a malformed request
// line or header, headers over its limit, headers or a body that did not
// arrive in time (D51). node:http would answer a bare status line; a client
// gets the problem+json every other refusal is, and the connection closes.
import type { Duplex } from "node:stream";
import { failure } from "../kernel/errors.js";
import { problemOf } from "../http/problem.js";
import type { Reason } from "../kernel/reasons.js";

/** What node:http hands a 'clientError' listener: any socket error, its code not always a string. */
type ClientError = Error & { code?: unknown };

/** The answer node:http is writing on the socket, if any (its own field: no API says it). */
interface Pending {
  headersSent: boolean;
  req?: { complete: boolean };
  once(event: "close", listener: () => void): unknown;
}

/**
 * Answers the refusal on the socket, when nothing of an answer has gone out
 * on it, and closes it. node:http calls this for every error of a socket (a
 * stream cut with a ConnectError among them), from an event: whatever it
 * meets, it must not throw, or the process would stop.
 */
export function answerClientError(err: ClientError, socket: Duplex): void {
  try {
    answer(err, socket);
  } catch {
    socket.destroy();
  }
}

function answer(err: ClientError, socket: Duplex): void {
  // Only HTTP's own refusals are answered: anything else (a reset, a TLS handshake that never came) just closes.
  const code = typeof err.code === "string" ? err.code : "";
  const http = code === "ERR_HTTP_REQUEST_TIMEOUT" || code.startsWith("HPE_");
  const pending = (socket as { _httpMessage?: Pending | null })._httpMessage ?? undefined;
  if (http && pending?.req?.complete === true) {
    // A request pipelined behind one still being answered: a refusal now would read as that
    // request's answer. That answer goes out first; then the connection closes.
    pending.once("close", () => socket.end());
    return;
  }
  // An answer begun to a request whose own bytes are at fault: only cutting it is honest (as node:http does).
  if (!http || !socket.writable || pending?.headersSent === true) {
    socket.destroy();
    return;
  }
  const [reason, detail] = refusalOf(code);
  const problem = problemOf(failure(reason, detail));
  const body = JSON.stringify(problem);
  socket.end(
    `HTTP/1.1 ${problem.status} ${problem.title}\r\n` +
      "Content-Type: application/problem+json; charset=utf-8\r\n" +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      `Connection: close\r\n\r\n${body}`,
  );
}

function refusalOf(code: string): [Reason, string] {
  switch (code) {
    case "HPE_HEADER_OVERFLOW":
      // The limit counts the request line too, and node:http does not say which part overflowed
      // (nor does the chunk it hands over show it), so a long URI is no 414 of its own.
      return ["REQUEST_HEADERS_TOO_LARGE", "the request line and headers are larger than the server reads (16 KiB)"];
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return ["REQUEST_TIMEOUT", "the request did not arrive within the server's timeouts"];
    default:
      return ["MALFORMED_REQUEST", "the request is not well-formed HTTP/1.1"];
  }
}
