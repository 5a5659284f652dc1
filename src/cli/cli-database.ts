// The database a CLI command works on (D33): named on stderr every time, and,
// for commands that only read or change what exists, never created by
// mistake where there is none.
import { existsSync } from "node:fs";
import { loadSettings } from "../config/settings.js";
import { openDatabase, type Db } from "../storage/database.js";

export class NoDatabaseError extends Error {}

/** Opens MERIDIAN_DB; `existing` refuses a path where there is no database yet. */
export function openCliDatabase(command: string, mode: "create" | "existing"): Db {
  const path = loadSettings().db;
  if (mode === "existing" && (path === ":memory:" || !existsSync(path))) {
    throw new NoDatabaseError(`meridian ${command}: no database at ${path}; set MERIDIAN_DB to the server's database file`);
  }
  process.stderr.write(`meridian ${command}: database ${path}\n`);
  return openDatabase(path);
}
