// API keys (D11): "mrd_<id>_<secret>", shown once, stored as SHA-256 of the
// secret. The secret is 32 random bytes, so a fast hash is enough: there is
// nothing to brute-force that a slow KDF would protect. This module holds the
// key format and what a store must do; sqlite/api-key-store.ts and
// postgres/api-key-store.ts keep them.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Principal } from "./principal.js";

/** What a key grants: a principal without the credential kind. */
export type ApiKeyGrant = Omit<Principal, "via">;

export type ApiKeyInfo = ApiKeyGrant & {
  id: string;
  createdAt: string;
};

export interface ApiKeyStore {
  /** A new key; `key` is shown once and stored only as a hash. */
  create(grant: ApiKeyGrant): Promise<{ id: string; key: string }>;
  /** Live keys, oldest first. */
  list(): Promise<ApiKeyInfo[]>;
  /** True when a live key was revoked. */
  revoke(id: string): Promise<boolean>;
  /** The principal of a valid, live key, or undefined. */
  verify(key: string): Promise<Principal | undefined>;
}

/** A key as stored. */
export interface ApiKeyRow {
  id: string;
  client_id: string;
  roles: string;
  scopes: string;
  projects: string;
  secret_hash: Buffer;
  created_at: string;
}

const keyRe = /^mrd_([a-z0-9]{12})_([A-Za-z0-9_-]{43})$/;

/** A key's id, given the id itself or the whole key; undefined when it is neither. */
export function keyIdOf(idOrKey: string): string | undefined {
  const text = idOrKey.trim();
  if (/^[a-z0-9]{12}$/.test(text)) return text;
  return keyRe.exec(text)?.[1];
}

/** A new key for `grant`: the row to store and the key to show once. */
export function newKey(grant: ApiKeyGrant): { row: ApiKeyRow; key: string } {
  const id = randomBytes(9)
    .toString("base64url")
    .toLowerCase()
    .replace(/[^a-z0-9]/g, "0")
    .slice(0, 12);
  const secret = randomBytes(32).toString("base64url");
  const row: ApiKeyRow = {
    id,
    client_id: grant.clientId,
    roles: JSON.stringify(grant.roles),
    scopes: JSON.stringify(grant.scopes),
    projects: JSON.stringify(grant.projects),
    secret_hash: hash(secret),
    created_at: new Date().toISOString(),
  };
  return { row, key: `mrd_${id}_${secret}` };
}

/** The id and secret of a well-formed key. */
export function parseKey(key: string): { id: string; secret: string } | undefined {
  const m = keyRe.exec(key);
  return m ? { id: m[1], secret: m[2] } : undefined;
}

/** The principal a live row grants to `secret`, or undefined when the secret is not this key's. */
export function principalIfMatches(row: ApiKeyRow | undefined, secret: string): Principal | undefined {
  if (!row || !timingSafeEqual(row.secret_hash, hash(secret))) return undefined;
  return { ...grantOf(row), via: "api-key", keyId: row.id };
}

export function infoOf(row: ApiKeyRow): ApiKeyInfo {
  return { id: row.id, ...grantOf(row), createdAt: row.created_at };
}

function hash(secret: string): Buffer {
  return createHash("sha256").update(secret).digest();
}

function grantOf(r: ApiKeyRow): ApiKeyGrant {
  return { clientId: r.client_id, roles: JSON.parse(r.roles), scopes: JSON.parse(r.scopes), projects: JSON.parse(r.projects) };
}
