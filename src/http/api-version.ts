// The api-version header (D9): absent means 2; 2 and 3 are accepted
// everywhere; anything else is a 400. Handlers read the parsed value.
import { createContextKey, type HandlerContext, type Interceptor } from "@connectrpc/connect";
import { invalidField } from "../kernel/errors.js";

export type ApiVersion = 2 | 3;

export const apiVersionKey = createContextKey<ApiVersion>(2, { description: "api-version" });

export function apiVersionInterceptor(): Interceptor {
  return (next) => async (req) => {
    const raw = req.header.get("api-version");
    if (raw !== null) {
      const v = raw.trim();
      if (v !== "2" && v !== "3") throw invalidField("api-version", `must be 2 or 3, got "${raw}"`);
      req.contextValues.set(apiVersionKey, v === "3" ? 3 : 2);
    }
    return next(req);
  };
}

export function apiVersionOf(ctx: HandlerContext): ApiVersion {
  return ctx.values.get(apiVersionKey);
}
