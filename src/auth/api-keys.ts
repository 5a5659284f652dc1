// API keys (D11): "mrd_<id>_<secret>", shown once, stored as SHA-256 of the
// secret. The secret is 32 random bytes, so a fast hash is enough: there is
// nothing to brute-force that a slow KDF would protect.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Database } from "better-sqlite3";
import type { Principal } from "./principal.js";

/** What a key grants: a principal without the credential kind. */
export type ApiKeyGrant = Omit<Principal, "via">;

export type ApiKeyInfo = ApiKeyGrant & {
  id: string;
  createdAt: string;
};

const keyRe = /^mrd_([a-z0-9]{12})_([A-Za-z0-9_-]{43})$/;

/** A key's id, given the id itself or the whole key; undefined when it is neither. */
export function keyIdOf(idOrKey: string): string | undefined {
  const text = idOrKey.trim();
  if (/^[a-z0-9]{12}$/.test(text)) return text;
  return keyRe.exec(text)?.[1];
}

interface Row {
  id: string;
  client_id: string;
  roles: string;
  scopes: string;
  projects: string;
  secret_hash: Buffer;
  created_at: string;
}

export class ApiKeyStore {
  private readonly byId;
  constructor(private readonly db: Database) {
    this.byId = db.prepare<[string], Row>("SELECT * FROM api_keys WHERE id = ? AND revoked_at IS NULL");
  }

  create(grant: ApiKeyGrant): { id: string; key: string } {
    const id = randomBytes(9).toString("base64url").toLowerCase().replace(/[^a-z0-9]/g, "0").slice(0, 12);
    const secret = randomBytes(32).toString("base64url");
    this.db
      .prepare("INSERT INTO api_keys (id, client_id, roles, scopes, projects, secret_hash, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)")
      .run(id, grant.clientId, JSON.stringify(grant.roles), JSON.stringify(grant.scopes), JSON.stringify(grant.projects), hash(secret), new Date().toISOString());
    return { id, key: `mrd_${id}_${secret}` };
  }

  list(): ApiKeyInfo[] {
    return this.db
      .prepare<[], Row>("SELECT * FROM api_keys WHERE revoked_at IS NULL ORDER BY created_at, id")
      .all()
      .map((r) => ({ id: r.id, ...grantOf(r), createdAt: r.created_at }));
  }

  /** True when a live key was revoked. */
  revoke(id: string): boolean {
    return this.db.prepare("UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL").run(new Date().toISOString(), id).changes > 0;
  }

  /** The principal of a valid key, or undefined. */
  verify(key: string): Principal | undefined {
    const m = keyRe.exec(key);
    if (!m) return undefined;
    const row = this.byId.get(m[1]);
    if (!row || !timingSafeEqual(row.secret_hash, hash(m[2]))) return undefined;
    return { ...grantOf(row), via: "api-key" };
  }
}

function hash(secret: string): Buffer {
  return createHash("sha256").update(secret).digest();
}

function grantOf(r: Row): ApiKeyGrant {
  return { clientId: r.client_id, roles: JSON.parse(r.roles), scopes: JSON.parse(r.scopes), projects: JSON.parse(r.projects) };
}
