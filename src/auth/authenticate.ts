// The one place credentials are read (D10): an interceptor every protocol
// passes, REST included (the transcoder calls the same handlers).
import type { Interceptor } from "@connectrpc/connect";
import { unauthenticated } from "../transport/errors.js";
import { requestInfoKey } from "../transport/request-info.js";
import type { ApiKeyStore } from "./api-keys.js";
import type { JwtVerifier } from "./jwt.js";
import { principalKey, type Principal } from "./principal.js";

/** Services anyone may call (health checks). */
const PUBLIC_SERVICES = new Set(["grpc.health.v1.Health"]);

export function authInterceptor(apiKeys: ApiKeyStore, jwt: JwtVerifier | undefined): Interceptor {
  return (next) => async (req) => {
    if (!PUBLIC_SERVICES.has(req.service.typeName)) {
      const principal = await authenticate(req.header, apiKeys, jwt);
      req.contextValues.set(principalKey, principal);
      const info = req.contextValues.get(requestInfoKey);
      if (info) info.clientId = principal.clientId;
    }
    return next(req);
  };
}

async function authenticate(header: Headers, apiKeys: ApiKeyStore, jwt: JwtVerifier | undefined): Promise<Principal> {
  const key = header.get("svc-open-api-key");
  if (key) {
    const p = apiKeys.verify(key.trim());
    if (!p) throw unauthenticated("invalid or revoked API key");
    return p;
  }
  const authorization = header.get("authorization");
  if (authorization) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!m) throw unauthenticated("Authorization must be a Bearer token");
    if (!jwt) throw unauthenticated("bearer tokens are not accepted: no JWT key is configured");
    try {
      return await jwt(m[1]);
    } catch (e) {
      throw unauthenticated(`invalid token: ${(e as Error).message}`);
    }
  }
  throw unauthenticated("credentials required: svc-open-api-key or Authorization: Bearer");
}
