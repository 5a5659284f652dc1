// Unexpected errors are logged with their stack and reach callers of every
// protocol as a bare "internal error" (D8): no internals leak. A call whose
// client left or whose deadline passed is no error of ours: it ends as
// cancelled, and the request handler logs it at info (D34).
import { ConnectError, type Interceptor } from "@connectrpc/connect";
import type { Logger } from "../log/logger.js";
import { isCancellation } from "./cancellation.js";
import { codeName } from "../kernel/reasons.js";
import { exchangeKey, type Exchange } from "./exchange.js";
import { failure, withReason } from "../kernel/errors.js";
import { mapStreamErrors } from "../http/stream-errors.js";

export function errorInterceptor(logger: Logger): Interceptor {
  const hide = (e: unknown, rpc: string, signal: AbortSignal, exchange: Exchange | undefined): unknown => {
    const err = hidden(e, rpc, signal, exchange);
    if (!(err instanceof ConnectError)) return err;
    exchange?.settle(codeName(err.code));
    return withReason(err); // D59: gRPC and Connect callers read a reason too
  };
  const hidden = (e: unknown, rpc: string, signal: AbortSignal, exchange: Exchange | undefined): unknown => {
    if (isCancellation(e, signal)) {
      if (exchange) exchange.cancelled = true;
      return e instanceof ConnectError ? e : failure("CANCELED", "the call was cancelled", { cause: e });
    }
    if (e instanceof ConnectError) return e;
    logger.error({ err: e, rpc }, "unexpected error");
    return failure("INTERNAL", "internal error");
  };
  return (next) => async (req) => {
    const rpc = `${req.service.typeName}/${req.method.name}`;
    const exchange = req.contextValues.get(exchangeKey);
    try {
      const res = await next(req);
      if (!res.stream) {
        exchange?.settle("ok");
        return res;
      }
      return mapStreamErrors(
        res,
        (e) => hide(e, rpc, req.signal, exchange),
        () => {
          exchange?.settle("ok");
        },
      );
    } catch (e) {
      throw hide(e, rpc, req.signal, exchange);
    }
  };
}
