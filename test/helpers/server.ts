// A real Meridian on a free port with a database of its own, and a log
// stream the test can read. The database is a SQLite file, or a fresh
// PostgreSQL database when MERIDIAN_TEST_BACKEND=postgres (D40: the suite
// runs on both; .ci/run does the second run).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { pino } from "pino";
import { SignJWT } from "jose";
import { startMeridian, type Meridian } from "../../src/app/app.js";
import type { ApiKeyGrant } from "../../src/auth/api-keys.js";
import { loadSettings } from "../../src/config/settings.js";
import { openDatabase, type Db } from "../../src/sqlite/database.js";
import { isPostgresUrl, type Sql } from "../../src/postgres/database.js";
import postgres from "postgres";
import { freshPgDatabase } from "./postgres.js";

/** The backend the suite runs on. */
export const TEST_BACKEND: "sqlite" | "postgres" = process.env.MERIDIAN_TEST_BACKEND === "postgres" ? "postgres" : "sqlite";
/** For tests of what only a SQLite file has (its locks, its WAL, the CLI's file commands). */
export const SQLITE_ONLY = TEST_BACKEND !== "sqlite" ? "SQLite only: the suite runs on PostgreSQL (MERIDIAN_TEST_BACKEND)" : undefined;

export const JWT_SECRET = "test-secret-of-thirty-two-bytes!!";

export interface TestServer {
  app: Meridian;
  url: string;
  /** MERIDIAN_DB: the SQLite file or the PostgreSQL URL. */
  db: string;
  dir: string;
  logs: Record<string, unknown>[];
  /** A fresh API key with this grant. */
  key(grant: Partial<ApiKeyGrant>): Promise<string>;
  /** Runs SQL on the server's database, parameters as $1, $2... in order, each once (either backend). */
  query<T = Record<string, unknown>>(text: string, ...params: Param[]): Promise<T[]>;
  close(): Promise<void>;
}

export async function startTestServer(env: Record<string, string> = {}): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), "meridian-test-"));
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split("\n")) if (line) logs.push(JSON.parse(line));
      done();
    },
  });
  const pg = TEST_BACKEND === "postgres" ? await freshPgDatabase() : undefined;
  const settings = loadSettings({
    MERIDIAN_PORT: "0",
    MERIDIAN_METRICS: "public",
    MERIDIAN_DB: pg?.url ?? join(dir, "meridian.db"),
    MERIDIAN_JWT_SECRET: JWT_SECRET,
    ...env,
  });
  const app = await startMeridian(settings, pino({ level: env.MERIDIAN_LOG_LEVEL ?? "info" }, sink));
  const { sqlite, postgres } = app.backend;
  return {
    app,
    url: app.url,
    db: settings.db,
    dir,
    logs,
    key: async (grant) => (await app.backend.apiKeys.create({ clientId: "client", roles: [], scopes: [], projects: [], ...grant })).key,
    query: (text, ...params) => runQuery(postgres ?? sqlite!, text, params),
    async close() {
      await app.close(1000);
      await pg?.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

type Param = string | number | null;

async function runQuery<T>(on: Sql | Db, text: string, params: Param[]): Promise<T[]> {
  if (!("prepare" in on)) return (await on.unsafe(text, params)) as unknown as T[];
  const stmt = on.prepare(text.replace(/\$\d+/g, "?"));
  return (stmt.reader ? stmt.all(...params) : (stmt.run(...params), [])) as T[];
}

/** Runs SQL on the server's database through a connection of its own, as another process would. */
export async function queryElsewhere<T = Record<string, unknown>>(server: TestServer, text: string, ...params: Param[]): Promise<T[]> {
  if (isPostgresUrl(server.db)) {
    const sql = postgres(server.db, { max: 1, onnotice: () => {} });
    try {
      return await runQuery<T>(sql, text, params);
    } finally {
      await sql.end();
    }
  }
  const db = openDatabase(server.db);
  try {
    return await runQuery<T>(db, text, params);
  } finally {
    db.close();
  }
}

/** An HS256 token signed with the test secret; claims override the defaults. */
export async function signToken(
  claims: Record<string, unknown>,
  opts: { expiresIn?: string | number | null; secret?: string } = {},
): Promise<string> {
  let jwt = new SignJWT(claims).setProtectedHeader({ alg: "HS256" }).setIssuedAt();
  if (opts.expiresIn !== null) jwt = jwt.setExpirationTime(opts.expiresIn ?? "5m");
  return jwt.sign(new TextEncoder().encode(opts.secret ?? JWT_SECRET));
}

/** The secret part of an API key "mrd_<id>_<secret>" (the secret may itself contain "_"). */
export function secretOf(key: string): string {
  return key.slice(key.indexOf("_", 4) + 1);
}

export function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}
