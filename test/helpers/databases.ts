// Databases without a server, on the backend the suite runs on (D40): a SQLite
// file or a fresh PostgreSQL database, opened as Meridian opens them, and
// counted through a plain connection that changes nothing.
import { join } from "node:path";
import Database from "better-sqlite3";
import postgres from "postgres";
import { loadSettings } from "../../src/config/settings.js";
import { openBackend, type Backend } from "../../src/app/backend.js";
import { displayUrl, isPostgresUrl } from "../../src/postgres/database.js";
import { freshPgDatabase } from "./postgres.js";
import { TEST_BACKEND } from "./server.js";

const drops: (() => Promise<void>)[] = [];
let n = 0;

/** A new, empty database: a file under `dir`, or a PostgreSQL database (dropped by dropDatabases()). */
export async function freshDatabase(dir: string): Promise<string> {
  if (TEST_BACKEND === "sqlite") return join(dir, `db${++n}.db`);
  const pg = await freshPgDatabase();
  drops.push(pg.drop);
  return pg.url;
}

export async function dropDatabases(): Promise<void> {
  await Promise.all(drops.splice(0).map((d) => d()));
}

/** Runs fn on the database opened as Meridian opens it (migrations, tidying up abandoned imports). */
export async function withBackend<T>(db: string, fn: (b: Backend) => Promise<T>): Promise<T> {
  const backend = await openBackend(loadSettings({ MERIDIAN_DB: db }), "file-and-folder");
  try {
    return await fn(backend);
  } finally {
    await backend.close();
  }
}

/** How the CLI names the database on stderr. */
export const shownAs = (db: string): string => (isPostgresUrl(db) ? displayUrl(db) : db);

/** Rows of a table, by a plain connection (opening the backend would tidy up abandoned imports). */
export async function countIn(db: string, table: string): Promise<number> {
  if (isPostgresUrl(db)) {
    const sql = postgres(db, { max: 1, onnotice: () => {} });
    try {
      const [{ n }] = await sql.unsafe<{ n: string }[]>(`SELECT count(*) AS n FROM ${table}`);
      return Number(n);
    } finally {
      await sql.end();
    }
  }
  const conn = new Database(db, { readonly: true });
  try {
    return (conn.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  } finally {
    conn.close();
  }
}
