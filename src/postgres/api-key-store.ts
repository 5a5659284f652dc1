// API keys in PostgreSQL, shared by every replica (D11, D40). Each replica
// keeps the rows it looked up (live ones and misses alike) and forgets them
// all when the change feed says api_keys changed, so a request costs no
// query once its key was seen, and a key revoked anywhere is refused by
// every replica as soon as the notification arrives. While the change feed
// is down a revocation could go unheard, so every lookup reads the row.
import type { ChangeFeed } from "./changes.js";
import type { Sql } from "./database.js";
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

const TABLE = "api_keys";
/** Rows kept per replica; past it the oldest go (ids of random keys must not grow it without bound, D51). */
const MAX_CACHED = 10_000;

export class PostgresApiKeyStore implements ApiKeyStore {
  private readonly cache = new Map<string, ApiKeyRow | null>();
  /** The public keys' origins, as of a change feed mark. */
  private origins: { mark: string; origins: PublicKeyOrigins } | undefined;

  constructor(
    private readonly sql: Sql,
    private readonly changes: ChangeFeed,
  ) {
    changes.watch((table) => {
      if (table === TABLE || table === "*") this.cache.clear();
    });
  }

  async create(grant: ApiKeyGrant): Promise<{ id: string; key: string }> {
    const { row, key } = newKey(grant);
    await this.sql`INSERT INTO api_keys ${this.sql(row as unknown as Record<string, unknown>)}`;
    this.cache.delete(row.id);
    return { id: row.id, key };
  }

  async list(): Promise<ApiKeyInfo[]> {
    const rows = await this.sql<ApiKeyRow[]>`SELECT * FROM api_keys WHERE revoked_at IS NULL ORDER BY created_at, id`;
    return rows.map(infoOf);
  }

  async revoke(id: string): Promise<boolean> {
    const done = await this.sql`UPDATE api_keys SET revoked_at = ${new Date().toISOString()} WHERE id = ${id} AND revoked_at IS NULL`;
    this.cache.delete(id);
    return done.count > 0;
  }

  /** Kept, like the rows, until the change feed says the keys changed (D60). */
  async publicOrigins(): Promise<PublicKeyOrigins> {
    const mark = this.changes.mark(TABLE);
    if (mark !== undefined && this.origins?.mark === mark) return this.origins.origins;
    const rows = await this.sql<Pick<ApiKeyRow, "origins">[]>`SELECT origins FROM api_keys WHERE kind = 'public' AND revoked_at IS NULL`;
    const origins = publicOriginsOf(rows);
    if (mark !== undefined && this.changes.mark(TABLE) === mark) this.origins = { mark, origins };
    return origins;
  }

  async verify(key: string): Promise<Principal | undefined> {
    const parsed = parseKey(key);
    if (!parsed) return undefined;
    const mark = this.changes.mark(TABLE);
    let row = mark === undefined ? undefined : this.cache.get(parsed.id);
    if (row === undefined) {
      const found = (await this.sql<ApiKeyRow[]>`SELECT * FROM api_keys WHERE id = ${parsed.id} AND revoked_at IS NULL`).at(0);
      row = found ?? null;
      // Kept only if no change to the keys may have been missed while it was read.
      if (mark !== undefined && this.changes.mark(TABLE) === mark) {
        const oldest = this.cache.keys().next();
        if (this.cache.size >= MAX_CACHED && !oldest.done) this.cache.delete(oldest.value);
        this.cache.set(parsed.id, row);
      }
    }
    return principalIfMatches(row ?? undefined, parsed.secret);
  }
}
