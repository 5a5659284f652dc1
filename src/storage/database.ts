// Opens the SQLite file: WAL so readers never wait for the writer (the CLI
// may write while the server runs, D33), synchronous=FULL so that an
// acknowledged write survives a crash, then brings the schema up to date.
import Database from "better-sqlite3";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { MIGRATIONS, type Migration } from "./schema.js";

export type Db = Database.Database;

export function openDatabase(path: string, migrations: readonly Migration[] = MIGRATIONS): Db {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = FULL");
  db.pragma("busy_timeout = 5000");
  db.pragma("foreign_keys = ON");
  migrate(db, migrations);
  return db;
}

/** Applies the migrations above the file's user_version, each in its own transaction. */
export function migrate(db: Db, migrations: readonly Migration[]): number {
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
      db.pragma(`user_version = ${m.version}`);
      applied++;
    }).immediate();
  }
  return applied;
}

export function schemaVersion(db: Db): number {
  return db.pragma("user_version", { simple: true }) as number;
}
