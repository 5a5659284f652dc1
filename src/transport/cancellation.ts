// A call that ends because its client left or its deadline passed is not a
// server failure: logged at info as cancelled (D34), never with a stack.
import { Code, ConnectError } from "@connectrpc/connect";

/** Node's errors for writing to a stream or socket the peer has closed or reset. */
const PEER_GONE = new Set([
  "ERR_HTTP2_INVALID_STREAM",
  "ERR_STREAM_DESTROYED",
  "ERR_STREAM_PREMATURE_CLOSE",
  "ERR_STREAM_WRITE_AFTER_END",
  "ECONNRESET",
  "EPIPE",
]);

export function isCancellation(e: unknown, signal?: AbortSignal): boolean {
  if (e instanceof ConnectError) return e.code === Code.Canceled || e.code === Code.DeadlineExceeded || e.code === Code.Aborted;
  if (e instanceof Error && (e.name === "AbortError" || PEER_GONE.has((e as { code?: string }).code ?? ""))) return true;
  // An implementation that gives up when its call's signal fires may throw anything.
  return signal?.aborted === true;
}
