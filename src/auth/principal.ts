// Who is calling, resolved once per request from an API key or a JWT (D10).
// Handlers read the principal and nothing else about credentials.
import { createContextKey, type HandlerContext } from "@connectrpc/connect";
import { unauthenticated } from "../kernel/errors.js";

/** What a public key (D60, public-keys.ts) is limited to. */
export interface PublicKeyLimits {
  /** Feature ids whose messages it reads (the global ones too). */
  features: string[];
  /** Origins (`https://shop.example`) whose pages may use it; empty: any. */
  origins: string[];
}

export interface Principal {
  clientId: string;
  roles: string[];
  scopes: string[];
  /** Project ids; "*" means every project. */
  projects: string[];
  via: "api-key" | "jwt";
  /** The API key's id (via api-key), for the audit trail (D48). */
  keyId?: string;
  /** The token's iss and sub claims (via jwt), for the audit trail (D48). */
  issuer?: string;
  subject?: string;
  /** When the credential ends (ms since the epoch; a token's exp), if it does by itself (D53). */
  expiresAt?: number;
  /** D60: present for a public key, the features it reads and the origins it serves (public-keys.ts). */
  publicKey?: PublicKeyLimits;
  /** D61: what targeted messages are matched against: a key's --audience values, a token's groups and roles claims. */
  audiences?: string[];
}

/** Every scope Meridian grants something for (D13, D14); a credential may carry others, which grant nothing here. */
export const SCOPES = {
  featureStatusRead: "platform_iam_featurestatus_read",
  featureStatusReadWrite: "platform_iam_featurestatus_readwrite",
  timeSeriesRead: "platform_timeseries_read",
  timeSeriesReadWrite: "platform_timeseries_readwrite",
} as const;

/** Every role Meridian looks at (D13). */
export const ROLES = { backOffice: "BackOffice" } as const;

export const principalKey = createContextKey<Principal | undefined>(undefined, { description: "meridian principal" });

/** The caller of an authenticated method; the interceptor has already refused anonymous calls. */
export function principalOf(ctx: HandlerContext): Principal {
  const p = ctx.values.get(principalKey);
  if (!p) throw unauthenticated("credentials required", "CREDENTIALS_MISSING");
  return p;
}

/** The credential a principal came from, as one string (D54 counts watchers by it): a key's id, or a token's issuer and subject. */
export function credentialOf(p: Principal): string {
  return p.via === "api-key" ? `key ${p.keyId}` : `token ${JSON.stringify([p.issuer ?? "", p.subject ?? p.clientId])}`;
}

export function hasScope(p: Principal, ...anyOf: string[]): boolean {
  return anyOf.some((s) => p.scopes.includes(s));
}

export function hasRole(p: Principal, role: string): boolean {
  return p.roles.includes(role);
}

export function hasProject(p: Principal, project: string): boolean {
  return p.projects.includes("*") || p.projects.includes(project);
}
