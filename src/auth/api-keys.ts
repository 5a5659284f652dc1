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
  /** D60: public (for pages, publicKey set) or private. */
  kind: "public" | "private";
  createdAt: string;
};

/** Which origins the live public keys serve (D60), for CORS preflights, which carry no key. */
export interface PublicKeyOrigins {
  /** Some public key names no origin: it serves every page. */
  any: boolean;
  origins: ReadonlySet<string>;
}

export interface ApiKeyStore {
  /** A new key; `key` is shown once and stored only as a hash. */
  create(grant: ApiKeyGrant): Promise<{ id: string; key: string }>;
  /** Live keys, oldest first. */
  list(): Promise<ApiKeyInfo[]>;
  /** True when a live key was revoked. */
  revoke(id: string): Promise<boolean>;
  /** The principal of a valid, live key, or undefined. */
  verify(key: string): Promise<Principal | undefined>;
  /** The origins the live public keys serve (D60). */
  publicOrigins(): Promise<PublicKeyOrigins>;
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
  /** D60: "public" or "private". */
  kind: string;
  /** D60, D61: JSON arrays; empty on a private key but for audiences. */
  features: string;
  origins: string;
  audiences: string;
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
    kind: grant.publicKey ? "public" : "private",
    features: JSON.stringify(grant.publicKey?.features ?? []),
    origins: JSON.stringify(grant.publicKey?.origins ?? []),
    audiences: JSON.stringify(grant.audiences ?? []),
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
  return { id: row.id, kind: row.kind === "public" ? "public" : "private", ...grantOf(row), createdAt: row.created_at };
}

/** The origins the public keys among `rows` serve (D60). */
export function publicOriginsOf(rows: Pick<ApiKeyRow, "origins">[]): PublicKeyOrigins {
  const origins = new Set<string>();
  let any = false;
  for (const r of rows) {
    const list = JSON.parse(r.origins) as string[];
    if (list.length === 0) any = true;
    for (const o of list) origins.add(o);
  }
  return { any, origins };
}

function hash(secret: string): Buffer {
  return createHash("sha256").update(secret).digest();
}

function grantOf(r: ApiKeyRow): ApiKeyGrant {
  const grant: ApiKeyGrant = {
    clientId: r.client_id,
    roles: storedList(r.roles),
    scopes: storedList(r.scopes),
    projects: storedList(r.projects),
    audiences: storedList(r.audiences),
  };
  if (r.kind === "public") grant.publicKey = { features: storedList(r.features), origins: storedList(r.origins) };
  return grant;
}

/** A list of names as create() stored it: JSON of a string array. */
function storedList(json: string): string[] {
  return JSON.parse(json) as string[];
}
