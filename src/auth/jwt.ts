// OAuth2 access tokens (D12), verified by jose: algorithms pinned per key
// kind, exp required, issuer and audience enforced when configured.
import { readFileSync } from "node:fs";
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet, type JWTPayload, type JWTVerifyGetKey } from "jose";
import type { Principal } from "./principal.js";

export interface JwtSettings {
  secret?: string;
  jwksFile?: string;
  issuer?: string;
  audience?: string;
}

const ASYMMETRIC = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"];

export type JwtVerifier = (token: string) => Promise<Principal>;

/** Undefined when no key is configured: bearer tokens are then refused. */
export function createJwtVerifier(s: JwtSettings): JwtVerifier | undefined {
  const verifiers: ((token: string) => Promise<JWTPayload>)[] = [];
  const common = { issuer: s.issuer || undefined, audience: s.audience || undefined, requiredClaims: ["exp"] };
  if (s.secret) {
    const key = new TextEncoder().encode(s.secret);
    verifiers.push(async (t) => (await jwtVerify(t, key, { ...common, algorithms: ["HS256"] })).payload);
  }
  if (s.jwksFile) {
    const jwks: JWTVerifyGetKey = createLocalJWKSet(JSON.parse(readFileSync(s.jwksFile, "utf8")) as JSONWebKeySet); // jose checks its shape
    verifiers.push(async (t) => (await jwtVerify(t, jwks, { ...common, algorithms: ASYMMETRIC })).payload);
  }
  if (verifiers.length === 0) return undefined;
  return async (token) => {
    let last: unknown;
    for (const verify of verifiers) {
      try {
        return principalOf(await verify(token));
      } catch (e) {
        last = e;
      }
    }
    throw last;
  };
}

function principalOf(claims: JWTPayload): Principal {
  const list = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x) => typeof x === "string") : typeof v === "string" ? [v] : []);
  const scopes = typeof claims.scope === "string" ? claims.scope.split(" ").filter(Boolean) : list(claims.scp);
  const clientId = typeof claims.client_id === "string" ? claims.client_id : typeof claims.sub === "string" ? claims.sub : "";
  const text = (v: unknown) => (typeof v === "string" ? v : undefined);
  const roles = [...list(claims.role), ...list(claims.roles)];
  return {
    clientId,
    roles,
    scopes,
    projects: list(claims.projects),
    via: "jwt",
    issuer: text(claims.iss),
    subject: text(claims.sub),
    expiresAt: typeof claims.exp === "number" ? claims.exp * 1000 : undefined,
    audiences: [...new Set([...list(claims.groups), ...roles])], // D61
  };
}
