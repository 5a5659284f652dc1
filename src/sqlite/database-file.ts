// Where a SQLite database may come into being (D56, issue 39 item 11). A path
// the operator named must lie in an existing folder: a typo in MERIDIAN_DB
// would otherwise make folders and an empty database, and the operator's keys
// would seem gone. Only `meridian init`, and `serve` on the default path of a
// fresh clone, make folders. A new database is private to its user: the file
// holds key hashes and webhook secrets (0600, in a 0700 folder when made).
import { closeSync, existsSync, mkdirSync, openSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { OperatorError } from "../config/operator-error.js";

/** What opening may create: nothing (the CLI's commands), the file (serve on a named path), or the file and its folders (init, serve's default). */
export type Creation = "never" | "file" | "file-and-folder";

/** Makes the database file if `creation` allows and there is none; true when it made one. */
export function prepareDatabaseFile(path: string, creation: Creation): boolean {
  if (path === ":memory:" || existsSync(path)) return false;
  if (creation === "never") {
    throw new OperatorError(
      "MERIDIAN_DB",
      path,
      "no database there",
      "set MERIDIAN_DB to the server's database file, or create one with meridian init",
    );
  }
  const folder = dirname(path);
  const kind = kindOf(folder);
  if (kind === "file")
    throw new OperatorError("MERIDIAN_DB", path, `${folder} is a file, not a folder`, "set MERIDIAN_DB to a file in a folder");
  if (kind === "none") {
    if (creation === "file") {
      throw new OperatorError(
        "MERIDIAN_DB",
        path,
        `its folder ${folder} does not exist`,
        "correct MERIDIAN_DB, or create the database there with meridian init",
      );
    }
    mkdirSync(folder, { recursive: true, mode: 0o700 });
  }
  // SQLite takes an empty file as a new database, and gives its -wal and -shm files the file's mode.
  closeSync(openSync(path, "wx", 0o600));
  return true;
}

function kindOf(path: string): "folder" | "file" | "none" {
  try {
    return statSync(path).isDirectory() ? "folder" : "file";
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return "none";
    throw e;
  }
}
