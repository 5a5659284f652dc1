// D55: an HTTP/1.1 answer given before the request's body was all read goes out
// with Connection: close, and then the connection is not cut at once. A client
// still writing the body would meet a closed socket: its next write is an
// EPIPE, and the reset that follows discards the answer from its receive
// buffer before it reads it. So after the answer the socket is half-closed
// and what arrives is read and thrown away (lingering close, as nginx does),
// until the body has all arrived or the client hangs up, bounded in time and
// in bytes so that a client that never stops cannot hold the socket.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";

/** Longest a refused request's connection lingers (nginx's lingering_time is 30 s). */
export const LINGER_MS = 10_000;
/** Longest a lingering connection may go without a byte (nginx's lingering_timeout). */
export const LINGER_SILENCE_MS = 5_000;
/** Most bytes read and discarded while lingering: the largest accepted body (64 MiB) twice over. */
export const LINGER_BYTES = 128 * 1024 * 1024;

const lingering = new WeakSet<Socket>();

/**
 * Makes the close node:http does after this request's answer (the answer
 * carries Connection: close) a lingering one. node:http ends a connection
 * after its last answer with socket.destroySoon(): half-close, then destroy
 * once the FIN is out; this socket's own destroySoon lingers instead.
 */
export function lingerAfterAnswer(req: IncomingMessage, res: ServerResponse): void {
  // The response's socket: a request whose reader gave up on it is destroyed and has let go of its own.
  const socket = res.socket;
  if (!socket || lingering.has(socket)) return;
  lingering.add(socket);
  socket.destroySoon = () => linger(req, socket);
}

function linger(req: IncomingMessage, socket: Socket): void {
  if (socket.destroyed) return;
  if (socket.writable) socket.end();
  const started = socket.bytesRead;
  const stop = () => socket.destroy();
  const deadline = setTimeout(stop, LINGER_MS).unref();
  // The bytes count is checked as time passes: node:http's parser reads the socket itself, without 'data' events.
  const meter = setInterval(() => {
    if (socket.bytesRead - started > LINGER_BYTES) stop();
  }, 100).unref();
  socket.setTimeout(LINGER_SILENCE_MS, stop);
  socket.once("close", () => {
    clearTimeout(deadline);
    clearInterval(meter);
  });
  // The rest of the body is discarded, whoever had been reading it (a router that
  // stopped at a refused message leaves it paused); once it has all arrived the
  // client writes no more, and the connection can close without a reset.
  const whenSent = () => {
    if (socket.writableFinished) stop();
    else socket.once("finish", stop);
  };
  if (req.complete) return whenSent();
  if (req.destroyed) return void socket.resume(); // its end will not be told: the bounds above end the lingering
  req.once("end", whenSent);
  req.removeAllListeners("readable");
  req.removeAllListeners("data");
  process.nextTick(() => req.resume());
}
