// The database a CLI command works on (D33, D40): named on stderr every time,
// never created by mistake where there is none for commands that only read
// or change what exists, and refused with one line by a command that needs
// the other backend.
import { existsSync } from "node:fs";
import { loadSettings } from "../config/settings.js";
import { openBackend, type Backend } from "../storage/backend.js";
import type { Db } from "../storage/database.js";
import { isPostgresUrl } from "../storage/postgres/connect.js";

export class NoDatabaseError extends Error {}

/** Opens MERIDIAN_DB; `existing` refuses a SQLite path where there is no database yet. */
export async function openCliBackend(command: string, mode: "create" | "existing"): Promise<Backend> {
  const settings = loadSettings();
  const path = settings.db;
  if (!isPostgresUrl(path) && mode === "existing" && (path === ":memory:" || !existsSync(path))) {
    throw new NoDatabaseError(`meridian ${command}: no database at ${path}; set MERIDIAN_DB to the server's database file`);
  }
  const backend = await openBackend(settings);
  process.stderr.write(`meridian ${command}: database ${backend.where}\n`);
  return backend;
}

/** The SQLite connection of a command that works on the file itself (import, backup). */
export async function openCliSqlite(command: string, unlessPostgres: string): Promise<{ db: Db; close(): Promise<void> }> {
  if (isPostgresUrl(loadSettings().db)) throw new NoDatabaseError(`meridian ${command}: MERIDIAN_DB is a PostgreSQL URL; ${unlessPostgres}`);
  const backend = await openCliBackend(command, "existing");
  return { db: backend.sqlite!, close: () => backend.close() };
}
