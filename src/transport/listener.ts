// One port for HTTP/1.1 and HTTP/2 (D4). Cleartext: the first bytes tell an
// HTTP/2 client (its connection preface starts "PRI * HTTP/2.0") from an
// HTTP/1.1 one, and the socket goes to the matching server. TLS: ALPN decides.
// Every connection has idle, header and request timeouts (D51).
import http from "node:http";
import http2 from "node:http2";
import net, { type AddressInfo, type Socket } from "node:net";
import { readFileSync } from "node:fs";
import type { NodeHandler } from "../http/node-types.js";
import { applyHttp1Options, guardSession, http1Options, timeoutsOf } from "./connection-timeouts.js";
import { answerClientError } from "./client-errors.js";

export interface ListenOptions {
  port: number;
  host: string;
  tlsCert?: string;
  tlsKey?: string;
  idleTimeoutS: number;
  headersTimeoutS: number;
  requestTimeoutS: number;
  /** Concurrent streams per HTTP/2 session (D54). */
  h2MaxStreams: number;
}

export interface Listener {
  readonly address: AddressInfo;
  readonly tls: boolean;
  /** Stops accepting, lets requests in flight finish for up to graceMs, then cuts what is left. */
  close(graceMs: number): Promise<void>;
}

const H2_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

export async function listen(handler: NodeHandler, opts: ListenOptions): Promise<Listener> {
  const sockets = new Set<Socket>();
  const sessions = new Set<http2.Http2Session>();
  // HTTP/1.1 requests in progress per socket, so that draining can end idle
  // keep-alive connections (http.Server tracks these only for sockets it accepted itself).
  const active = new Map<Socket, number>();
  const h2Sockets = new WeakSet<Socket>();
  let draining = false;
  const countHttp1 = (req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse) => {
    if (req.httpVersionMajor !== 1) return;
    const { socket } = req;
    active.set(socket, (active.get(socket) ?? 0) + 1);
    res.once("close", () => {
      const n = (active.get(socket) ?? 1) - 1;
      active.set(socket, n);
      if (draining && n === 0) socket.end();
    });
  };
  const endIdleHttp1 = () => {
    for (const s of sockets) if (!h2Sockets.has(s) && !active.get(s)) s.end();
  };
  const timeouts = timeoutsOf(opts);
  const h2Options = { settings: { initialWindowSize: 1 << 20, maxConcurrentStreams: opts.h2MaxStreams } };
  // No Nagle: a response's last small write must not wait for the client's
  // delayed ACK (about 40 ms a response on a kept-alive connection).
  const socketOptions = { noDelay: true };
  let outer: net.Server;
  let h1: http.Server | undefined;
  const certs = opts.tlsCert && opts.tlsKey ? { cert: opts.tlsCert, key: opts.tlsKey } : undefined;
  const tls = certs !== undefined;

  if (certs) {
    const secure = http2.createSecureServer(
      {
        ...h2Options,
        ...socketOptions,
        cert: readFileSync(certs.cert),
        key: readFileSync(certs.key),
        allowHTTP1: true,
        handshakeTimeout: timeouts.headersMs,
      },
      handler,
    );
    applyHttp1Options(secure, timeouts);
    secure.on("session", (s) => {
      track(sessions, s);
      guardSession(s, timeouts);
    });
    secure.on("secureConnection", (s: Socket & { alpnProtocol?: string | false }) => {
      track(sockets, s);
      if (s.alpnProtocol === "h2") h2Sockets.add(s);
      s.once("close", () => active.delete(s));
    });
    secure.on("request", countHttp1);
    secure.on("clientError", answerClientError);
    outer = secure;
  } else {
    const http1 = (h1 = http.createServer(http1Options(timeouts), handler));
    http1.on("request", countHttp1);
    http1.on("clientError", answerClientError);
    const h2 = http2.createServer(h2Options, handler);
    h2.on("session", (s) => {
      track(sessions, s);
      guardSession(s, timeouts);
    });
    outer = net.createServer(socketOptions, (socket) => {
      track(sockets, socket);
      socket.once("close", () => active.delete(socket));
      socket.once("error", () => socket.destroy());
      // A client that does not say which protocol it speaks in time is cut.
      const deadline = setTimeout(() => socket.destroy(), timeouts.headersMs).unref();
      socket.once("close", () => clearTimeout(deadline));
      // Read until the bytes either are the whole HTTP/2 preface or differ from it
      // (a first segment "P" decides nothing), hand them back, and let the chosen server read them.
      let head: Buffer = Buffer.alloc(0);
      const sniff = (chunk: Buffer) => {
        head = head.length === 0 ? chunk : Buffer.concat([head, chunk]);
        const n = Math.min(head.length, H2_PREFACE.length);
        const isH2 = head.subarray(0, n).equals(H2_PREFACE.subarray(0, n));
        if (isH2 && n < H2_PREFACE.length) return;
        clearTimeout(deadline);
        socket.off("data", sniff);
        socket.pause();
        socket.unshift(head);
        if (isH2) h2Sockets.add(socket);
        (isH2 ? h2 : http1).emit("connection", socket);
        process.nextTick(() => socket.resume());
      };
      socket.on("data", sniff);
    });
  }

  await new Promise<void>((resolve, reject) => {
    outer.once("error", reject);
    outer.listen(opts.port, opts.host, () => {
      outer.off("error", reject);
      resolve();
    });
  });
  // node:http starts its header and request timeout checks when the server emits
  // "listening"; ours is handed sockets and never listens itself, so say it does.
  h1?.emit("listening");

  return {
    address: outer.address() as AddressInfo,
    tls,
    close(graceMs) {
      return new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          for (const s of sessions) s.destroy();
          for (const s of sockets) s.destroy();
        }, graceMs);
        timer.unref();
        outer.close(() => {
          clearTimeout(timer);
          h1?.close(() => {}); // stops its timeout checks
          resolve();
        });
        draining = true;
        // GOAWAY: HTTP/2 clients finish their streams and open no new ones.
        for (const s of sessions) s.close();
        endIdleHttp1();
      });
    },
  };
}

function track<T extends { once(event: "close", fn: () => void): unknown }>(set: Set<T>, item: T): void {
  set.add(item);
  item.once("close", () => set.delete(item));
}
