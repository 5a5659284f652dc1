// API keys in SQLite (D11). Lookups are one indexed read per request; the
// file is local, so no cache is needed, and a revocation by the CLI is seen
// by the next request.
import type { Database } from "better-sqlite3";
import {
  infoOf,
  newKey,
  parseKey,
  principalIfMatches,
  publicOriginsOf,
  type PublicKeyOrigins,
  type ApiKeyGrant,
  type ApiKeyInfo,
  type ApiKeyRow,
  type ApiKeyStore,
} from "../auth/api-keys.js";
import type { Principal } from "../auth/principal.js";

export class SqliteApiKeyStore implements ApiKeyStore {
  private readonly byId;
  private readonly insertStmt;
  private readonly listStmt;
  private readonly revokeStmt;
  private readonly publicOriginsStmt;

  constructor(db: Database) {
    this.byId = db.prepare<[string], ApiKeyRow>("SELECT * FROM api_keys WHERE id = ? AND revoked_at IS NULL");
    this.insertStmt = db.prepare<ApiKeyRow>(
      "INSERT INTO api_keys (id, client_id, roles, scopes, projects, secret_hash, created_at, kind, features, origins, audiences) " +
        "VALUES (@id, @client_id, @roles, @scopes, @projects, @secret_hash, @created_at, @kind, @features, @origins, @audiences)",
    );
    this.publicOriginsStmt = db.prepare<[], Pick<ApiKeyRow, "origins">>(
      "SELECT origins FROM api_keys WHERE kind = 'public' AND revoked_at IS NULL",
    );
    this.listStmt = db.prepare<[], ApiKeyRow>("SELECT * FROM api_keys WHERE revoked_at IS NULL ORDER BY created_at, id");
    this.revokeStmt = db.prepare<[string, string]>("UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL");
  }

  /** create() without waiting: for tests and benchmarks that seed a file. */
  createNow(grant: ApiKeyGrant): { id: string; key: string } {
    const { row, key } = newKey(grant);
    this.insertStmt.run(row);
    return { id: row.id, key };
  }

  async create(grant: ApiKeyGrant): Promise<{ id: string; key: string }> {
    return this.createNow(grant);
  }

  async list(): Promise<ApiKeyInfo[]> {
    return this.listStmt.all().map(infoOf);
  }

  async revoke(id: string): Promise<boolean> {
    return this.revokeStmt.run(new Date().toISOString(), id).changes > 0;
  }

  /** Read each time: a preflight is rare (browsers keep its answer), and a key made by the CLI shows at once. */
  async publicOrigins(): Promise<PublicKeyOrigins> {
    return publicOriginsOf(this.publicOriginsStmt.all());
  }

  async verify(key: string): Promise<Principal | undefined> {
    const parsed = parseKey(key);
    return parsed && principalIfMatches(this.byId.get(parsed.id), parsed.secret);
  }
}
