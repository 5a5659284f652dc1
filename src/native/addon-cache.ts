// Where the single executable (D38) keeps its native addons: a node addon
// must be a file to be loaded, so each is written once to a private cache
// directory, under a name holding its content hash, and checked against
// that hash before every load. The directory must be ours and closed to
// others (mode 0700): a file another user could replace would be code run
// as us.
import { createHash } from "node:crypto";
import { lstatSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { OperatorError } from "../config/operator-error.js";
import { join } from "node:path";

/** MERIDIAN_CACHE_DIR, else $XDG_CACHE_HOME/meridian, else ~/.cache/meridian (a temporary directory's when there is no home). */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.MERIDIAN_CACHE_DIR) return env.MERIDIAN_CACHE_DIR;
  if (env.XDG_CACHE_HOME) return join(env.XDG_CACHE_HOME, "meridian");
  let home = "";
  try {
    home = homedir();
  } catch {
    // No home directory (some service users).
  }
  return home && home !== "/" ? join(home, ".cache", "meridian") : join(tmpdir(), `meridian-${process.getuid?.() ?? "user"}`);
}

/** Creates `dir` (mode 0700) if needed; refuses one that is not a directory of ours closed to group and others. */
export function privateDir(dir: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = lstatSync(dir);
  const uid = process.getuid?.();
  const refuse = (problem: string, remedy: string) => new OperatorError("MERIDIAN_CACHE_DIR", dir, problem, remedy);
  if (!st.isDirectory()) throw refuse("that is not a folder", "set MERIDIAN_CACHE_DIR to a folder of this user's (mode 0700)");
  if (uid !== undefined && st.uid !== uid)
    throw refuse("that folder belongs to another user", "set MERIDIAN_CACHE_DIR to a folder of this user's");
  if ((st.mode & 0o077) !== 0) {
    throw refuse(
      `that folder is open to other users (mode ${(st.mode & 0o777).toString(8)})`,
      `chmod 700 it, or set MERIDIAN_CACHE_DIR to a private folder`,
    );
  }
  return dir;
}

function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/**
 * The path of a file in `dir` holding exactly `bytes`, written now if it is
 * missing or differs (a changed file is replaced, never loaded), checked by
 * its hash on every call.
 */
export function cachedFile(dir: string, name: string, bytes: Uint8Array): string {
  privateDir(dir);
  const hash = sha256(bytes);
  const file = join(dir, `${hash.slice(0, 32)}-${name}`);
  if (!matches(file, hash)) {
    const temp = `${file}.${process.pid}.tmp`;
    try {
      writeFileSync(temp, bytes, { mode: 0o500 });
      rmSync(file, { force: true }); // a replaced file may have lost its write bit
      renameSync(temp, file);
    } finally {
      rmSync(temp, { force: true });
    }
    if (!matches(file, hash)) throw new Error(`${file} does not hold what was written to it`);
  }
  return file;
}

function matches(file: string, hash: string): boolean {
  try {
    if (!lstatSync(file).isFile()) return false;
    return sha256(readFileSync(file)) === hash;
  } catch {
    return false;
  }
}
