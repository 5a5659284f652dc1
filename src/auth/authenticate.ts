// The one place credentials are read (D10). The request handler calls the
// authenticator as a request arrives, before any body is read or inflated
// (D51), and puts the principal in the call's context values; the
// interceptor every protocol passes (REST included) only checks it is there.
import type { DescMethod } from "@bufbuild/protobuf";
import { Code, ConnectError, createContextKey, type ContextValues, type Interceptor } from "@connectrpc/connect";
import { WaitLimitError, within } from "../kernel/wait-limit.js";
import { failure, unauthenticated } from "../kernel/errors.js";
import type { ApiKeyStore } from "./api-keys.js";
import type { JwtVerifier } from "./jwt.js";
import { PublicKeyGate } from "./public-keys.js";
import { principalKey, type Principal } from "./principal.js";

/** Services anyone may call: health checks, and reflection (D42; the schema is public, the data is not). */
const PUBLIC_SERVICES = new Set([
  "grpc.health.v1.Health",
  "grpc.reflection.v1.ServerReflection",
  "grpc.reflection.v1alpha.ServerReflection",
]);

/** Whether a method may be called without credentials. */
export function isPublic(method: DescMethod): boolean {
  return PUBLIC_SERVICES.has(method.parent.typeName);
}

/** Reads one request header (lower-case name); undefined when absent. */
export type HeaderReader = (name: string) => string | undefined;

/** The caller's principal from the request headers for a call of `method`, or a 401 (a 403 for a public key out of bounds, D60) ConnectError. */
export type Authenticator = (header: HeaderReader, method: DescMethod) => Promise<Principal>;

/**
 * `waitLimitMs`: the longest a key's lookup may wait for the database before
 * the request is a 503 (PostgreSQL, D40); `gate`: what public keys may call
 * (D60), by default nothing.
 */
export function createAuthenticator(
  apiKeys: ApiKeyStore,
  jwt: JwtVerifier | undefined,
  waitLimitMs?: number,
  gate = new PublicKeyGate(),
): Authenticator {
  return async (header, method) => {
    const key = header("svc-open-api-key");
    if (key) {
      let p: Principal | undefined;
      try {
        const lookup = apiKeys.verify(key.trim());
        p = await (waitLimitMs === undefined ? lookup : within(lookup, waitLimitMs, () => new WaitLimitError(waitLimitMs)));
      } catch (e) {
        // The key store cannot be read (PostgreSQL away): a 503, never a 401 that tells a good key it is bad.
        throw failure("DATABASE_UNAVAILABLE", "credentials cannot be checked now: the database is unavailable; try again shortly", {
          headers: { "retry-after": "1" },
          cause: e,
        });
      }
      if (!p) throw unauthenticated("invalid or revoked API key");
      const refusal = gate.refusal(p, method, header("origin"));
      if (refusal) throw refusal;
      return p;
    }
    const authorization = header("authorization");
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
    throw unauthenticated("credentials required: svc-open-api-key or Authorization: Bearer", "CREDENTIALS_MISSING");
  };
}

/** Why the request handler refused the credentials, for calls that read no body (Connect GET) to raise. */
export const authFailureKey = createContextKey<ConnectError | undefined>(undefined, { description: "authentication failure" });

/** Refuses a call of a non-public method that reached its handler without a principal (a guard: the request handler authenticates). */
export function authInterceptor(): Interceptor {
  return (next) => async (req) => {
    if (!isPublic(req.method) && !req.contextValues.get(principalKey))
      throw req.contextValues.get(authFailureKey) ?? unauthenticated("credentials required", "CREDENTIALS_MISSING");
    return next(req);
  };
}

/**
 * D53: checks the call's credential again (recheckOf): a key revoked since,
 * on any replica, or a token past its exp, is a 401. Set by the request
 * handler for every authenticated call; long-lived answers call it before
 * each event.
 */
export const callerCheckKey = createContextKey<(() => Promise<unknown>) | undefined>(undefined, {
  description: "re-authenticates the caller",
});

/**
 * How a call's credential is checked again (D53). A key is looked up again
 * (revocation shows there); a token was verified when the call began and can
 * only expire, so its exp is compared with the clock and no signature is
 * verified again (10,000 watchers woken by one write would otherwise verify
 * 10,000 signatures).
 */
export function recheckOf(principal: Principal, authenticateAgain: () => Promise<unknown>): () => Promise<unknown> {
  if (principal.via !== "jwt") return authenticateAgain;
  const expiresAt = principal.expiresAt;
  return async () => {
    if (expiresAt !== undefined && Date.now() >= expiresAt)
      throw unauthenticated(`invalid token: it expired at ${new Date(expiresAt).toISOString()}`);
  };
}

/**
 * Throws the 401 when the call's credential has ended since it began (D53).
 * A credential that cannot be checked now (the database away) is not one that
 * ended: the stream goes on, as a new request would get a 503, not a 401.
 */
export async function recheckCaller(values: ContextValues): Promise<void> {
  const check = values.get(callerCheckKey);
  if (!check) return;
  try {
    await check();
  } catch (e) {
    if (e instanceof ConnectError && e.code === Code.Unauthenticated) throw e;
  }
}
