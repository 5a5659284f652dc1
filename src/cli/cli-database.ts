// The database a CLI command works on (D33, D40, D56): named on stderr every
// time, and never created by a command: only `meridian init` and `serve`
// make one, so a misspelt or unset MERIDIAN_DB is refused in one line instead
// of getting a new empty database the server never sees. A command that needs
// the other backend is refused in one line too.
import { OperatorError, underSetting } from "../config/operator-error.js";
import { loadSettings } from "../config/settings.js";
import { openBackend, type Backend } from "../app/backend.js";
import type { Db } from "../sqlite/database.js";
import { isPostgresUrl } from "../postgres/database.js";

/** Opens MERIDIAN_DB; `create` (meridian init) makes the database and its folders where there is none, every other command refuses. */
export async function openCliBackend(command: string, mode: "create" | "existing"): Promise<Backend> {
  const settings = loadSettings();
  const path = settings.db;
  if (path === ":memory:" && mode === "existing") {
    throw new OperatorError("MERIDIAN_DB", path, "no database there", "set MERIDIAN_DB to the server's database file");
  }
  const backend = await underSetting("MERIDIAN_DB", path, () => openBackend(settings, mode === "create" ? "file-and-folder" : "never"));
  process.stderr.write(`meridian ${command}: database ${backend.where}\n`);
  return backend;
}

/** The SQLite connection of a command that works on the file itself (backup). */
export async function openCliSqlite(command: string, unlessPostgres: string): Promise<{ db: Db; close: () => Promise<void> }> {
  const { db } = loadSettings();
  if (isPostgresUrl(db))
    throw new OperatorError("MERIDIAN_DB", db, `is a PostgreSQL URL; meridian ${command} works on a SQLite file`, unlessPostgres);
  const backend = await openCliBackend(command, "existing");
  const { sqlite } = backend;
  if (!sqlite) throw new Error(`meridian ${command}: ${db} opened as a SQLite file but has no SQLite connection`);
  return { db: sqlite, close: () => backend.close() };
}
