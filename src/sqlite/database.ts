// Opens the SQLite file: WAL so readers never wait for the writer (the CLI
// may write while the server runs, D33), synchronous=FULL so that an
// acknowledged write survives a crash, then brings the schema up to date and
// removes what abandoned imports staged. A connection waits up to 5 s for the
// write lock; the server's stops waiting once it serves (neverWaitForLocks).
import Database from "better-sqlite3";
import { discardAbandonedImports } from "./import-registry.js";
import { MIGRATIONS, type SqliteMigration } from "./schema.js";
import { inSingleExecutable, loadAddon } from "../native/load.js";

export type Db = Database.Database;

export function openDatabase(path: string, migrations: readonly SqliteMigration[] = MIGRATIONS): Db {
  const db = new Database(path, connectionOptions());
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = FULL");
  db.pragma("busy_timeout = 5000");
  db.pragma("foreign_keys = ON");
  migrate(db, migrations);
  discardAbandonedImports(db);
  return db;
}

let singleExecutableBinding: object | undefined;

/** Under the single executable, SQLite comes from its own assets (D38); otherwise better-sqlite3 finds its prebuilt binary. */
function connectionOptions(): Database.Options {
  if (!inSingleExecutable) return {};
  singleExecutableBinding ??= loadAddon("better_sqlite3.node", () => "") as object;
  return { nativeBinding: singleExecutableBinding as never };
}

/**
 * From now on a write that finds the database locked fails at once with
 * SQLITE_BUSY instead of waiting: better-sqlite3 is synchronous, so a wait
 * would stall the server's whole event loop (D51). transport/database-retry-interceptor.ts retries such
 * a call later, without blocking.
 */
export function neverWaitForLocks(db: Db): void {
  db.pragma("busy_timeout = 0");
}

/**
 * A named parameter as the statements here write it: `+@name`. Where
 * SQLite reads a bare parameter's value while planning (a bound LIMIT; an
 * equality on the index whose order answers ORDER BY) it marks the statement to be prepared again whenever that parameter is bound,
 * which better-sqlite3 does on every call; the unary plus makes it an
 * expression the planner does not read, and the plans stay the same (EXPLAIN
 * QUERY PLAN of every listing shape, the block store's scans). perf showed
 * sqlite3Reprepare under most of those calls: a message listing 46 -> 8 us a
 * call, a block scan 70 -> 13 us, a dataset's series 39 -> 7 us.
 */
export function param(name: string): string {
  return `+@${name}`;
}

/** The serving connection's page cache, in KiB (boundPageCache). */
export const SERVING_PAGE_CACHE_KIB = 256;

/**
 * Bounds the serving connection's page cache to SERVING_PAGE_CACHE_KIB (D28:
 * a read's memory does not grow with its range). better-sqlite3 builds SQLite
 * with a cache of 16 MB a connection, which keeps every page a read touches
 * until it is full: a value read touches one table page per block (a block's
 * row begins there; the rest of its payload SQLite reads past the cache), so
 * a 10M-row read left ~2.5 MiB more of them than a 1M-row read, and a longer
 * read or a chart over a long series up to 16 MB. Pages beyond come from the
 * operating system's file cache, a read() each: the same server CPU per value
 * and chart read measured either way. The CLI's connections (imports) keep
 * the larger cache: their memory is not a server's.
 */
export function boundPageCache(db: Db): void {
  db.pragma(`cache_size = -${SERVING_PAGE_CACHE_KIB}`);
}

/** Applies the migrations above the file's user_version, each in its own transaction. */
export function migrate(db: Db, migrations: readonly SqliteMigration[]): number {
  const current = db.pragma("user_version", { simple: true }) as number;
  const latest = migrations.length ? migrations[migrations.length - 1].version : 0;
  if (current > latest) {
    throw new Error(`database schema version ${current} is newer than this Meridian (${latest}); upgrade Meridian`);
  }
  let applied = 0;
  for (const m of migrations) {
    if (m.version <= current) continue;
    // IMMEDIATE: a second process starting at the same time waits instead of migrating twice.
    db.transaction(() => {
      if ((db.pragma("user_version", { simple: true }) as number) >= m.version) return;
      db.exec(m.sql);
      m.fill?.(db);
      db.pragma(`user_version = ${m.version}`);
      applied++;
    }).immediate();
  }
  return applied;
}

export function schemaVersion(db: Db): number {
  return db.pragma("user_version", { simple: true }) as number;
}
