// Unexpected errors are logged with their stack and reach callers of every
// protocol as a bare "internal error" (D8): no internals leak.
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import type { Logger } from "../log/logger.js";

export function errorInterceptor(logger: Logger): Interceptor {
  const hide = (e: unknown, rpc: string): unknown => {
    if (e instanceof ConnectError) return e;
    logger.error({ err: e, rpc }, "unexpected error");
    return new ConnectError("internal error", Code.Internal);
  };
  return (next) => async (req) => {
    const rpc = `${req.service.typeName}/${req.method.name}`;
    try {
      const res = await next(req);
      if (!res.stream) return res;
      const inner = res.message;
      return {
        ...res,
        message: (async function* () {
          try {
            yield* inner;
          } catch (e) {
            throw hide(e, rpc);
          }
        })(),
      };
    } catch (e) {
      throw hide(e, rpc);
    }
  };
}
