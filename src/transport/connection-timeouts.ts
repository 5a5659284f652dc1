// D51: idle, header and request timeouts for every connection of the listener.
// HTTP/1.1 uses node:http's own checks; HTTP/2 sessions get timers here, counted
// in open streams rather than socket activity, so that pings or a trickle of
// frames keep nothing alive and a long answer (a health Watch) is never cut.
import type http from "node:http";
import http2 from "node:http2";

export interface Timeouts {
  /** A connection with no request in progress is closed after this. */
  idleMs: number;
  /** From connecting (or starting the next HTTP/1.1 request) to the end of a request's headers. */
  headersMs: number;
  /** From the start of a request to its last byte received; the answer is not counted. */
  requestMs: number;
}

export function timeoutsOf(s: { idleTimeoutS: number; headersTimeoutS: number; requestTimeoutS: number }): Timeouts {
  // Headers are part of the request: node:http refuses a headers timeout above the request timeout.
  return {
    idleMs: s.idleTimeoutS * 1000,
    headersMs: Math.min(s.headersTimeoutS, s.requestTimeoutS) * 1000,
    requestMs: s.requestTimeoutS * 1000,
  };
}

/** node:http's options for the same bounds (its headersTimeout counts from the first byte of each request). */
export function http1Options(t: Timeouts) {
  return {
    keepAliveTimeout: t.idleMs,
    headersTimeout: t.headersMs,
    requestTimeout: t.requestMs,
    // node:http checks these every 30 s by default, which would stretch a short headers timeout.
    connectionsCheckingInterval: Math.min(1000, t.headersMs / 2),
    // Its refusal of an HTTP/1.1 request without Host is a bare 400; request-target.ts answers problem+json (D8).
    requireHostHeader: false,
  };
}

/** The same options set on a server node:http did not construct (the TLS server with allowHTTP1). */
export function applyHttp1Options(server: http2.Http2SecureServer, t: Timeouts): void {
  Object.assign(server as unknown as http.Server, http1Options(t));
}

/**
 * Bounds one HTTP/2 session: its client's SETTINGS and first request's headers
 * must arrive within the headers timeout, a stream must receive its whole
 * request within the request timeout, and a session without open streams is
 * closed after the idle timeout.
 */
export function guardSession(session: http2.ServerHttp2Session, t: Timeouts): void {
  let open = 0;
  let timer: NodeJS.Timeout | undefined;
  const arm = (ms: number, action: () => void) => {
    clearTimeout(timer);
    timer = setTimeout(action, ms).unref();
  };
  const closeIdle = () => {
    // GOAWAY first; a client that does not then hang up is cut.
    session.close();
    arm(t.headersMs, () => session.destroy());
  };
  // The first request is due within the headers timeout, as on HTTP/1.1: a
  // session that sent its preface (and SETTINGS) and nothing more is closed
  // then, not after the idle timeout (D55). Without its SETTINGS it is cut.
  let settled = false;
  session.once("remoteSettings", () => (settled = true));
  arm(t.headersMs, () => (settled ? closeIdle() : session.destroy()));
  session.on("stream", (stream) => {
    open++;
    clearTimeout(timer);
    const request = setTimeout(() => {
      // The client has not finished sending its request: cancel the stream (HTTP/1.1 answers 408).
      if (!stream.destroyed && !stream.state.remoteClose) stream.close(http2.constants.NGHTTP2_CANCEL);
    }, t.requestMs).unref();
    stream.once("close", () => {
      clearTimeout(request);
      if (--open === 0 && !session.closed && !session.destroyed) arm(t.idleMs, closeIdle);
    });
  });
  session.once("close", () => clearTimeout(timer));
}
