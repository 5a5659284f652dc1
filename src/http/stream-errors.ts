// An interceptor that answers for the errors of a call also has to answer for
// those its response stream throws later, message by message, after the call
// itself has returned. Written once for the error interceptor (D8) and the
// busy retry (D51).
import type { StreamResponse } from "@connectrpc/connect";

/** `res` whose stream throws `map(e)` where it threw `e`; `done` is told when the stream ends without one. */
export function mapStreamErrors(res: StreamResponse, map: (e: unknown) => unknown, done: () => void = () => {}): StreamResponse {
  const inner = res.message;
  return {
    ...res,
    message: (async function* () {
      try {
        yield* inner;
        done();
      } catch (e) {
        throw map(e);
      }
    })(),
  };
}
