// What an operator fixes (D56): a failure at start or in a CLI command is one
// line naming the setting, its value (no password of a URL), the cause in
// words and what to do. Exit 78 (EX_CONFIG) when the setting is wrong, 1 when
// the setting is right but the world is not (a port taken, a database down).
// The raw errors of the steps that use a setting are translated by one table,
// TRANSLATIONS, at one place each step runs (underSetting), not by try/catch
// blocks of their own.
import { statSync } from "node:fs";

export const EXIT_SETTING = 78;
export const EXIT_FAILURE = 1;

export class OperatorError extends Error {
  readonly value: string;
  constructor(
    readonly setting: string,
    value: string,
    readonly problem: string,
    readonly remedy: string,
    readonly exitCode: typeof EXIT_SETTING | typeof EXIT_FAILURE = EXIT_SETTING,
    options?: { cause?: unknown },
  ) {
    const shown = maskUrlPasswords(value);
    super(`${setting}=${shown === "" ? '""' : shown}: ${problem}${remedy ? `; ${remedy}` : ""}`, options);
    this.value = shown;
  }
}

/**
 * Every URL's password in a text replaced by ***: `postgres://u:secret@h/db` -> `postgres://u:***@h/db`.
 * The password runs to the authority's last `@`, so one holding an unencoded `@` is masked whole.
 */
export function maskUrlPasswords(text: string): string {
  return text.replace(/(\b[a-z][a-z0-9+.-]*:\/\/[^\s/:@"']*:)[^\s"'/]*@/gi, "$1***@");
}

interface Translation {
  /** Whether this row explains the error. */
  matches(e: Failure, setting: string, value: string): boolean;
  /** The error is about the host of a step that uses a host and a port (listening): the host's setting is named. */
  aboutHost?: true;
  problem(e: Failure, value: string): string;
  remedy(setting: string): string;
  exit: number;
}

type Failure = Error & { code?: string; errno?: number; path?: string; syscall?: string };

const code =
  (...codes: string[]) =>
  (e: Failure) =>
    typeof e.code === "string" && codes.includes(e.code);
const isDb = (s: string) => s === "MERIDIAN_DB";

/** How a raw error of a step that uses a setting reads to an operator; the first row that matches wins. */
const TRANSLATIONS: readonly Translation[] = [
  // Ports.
  {
    matches: code("EADDRINUSE"),
    problem: () => "the port is in use by another process",
    remedy: (s) => `stop that process or set ${s} to a free port${s === "MERIDIAN_METRICS" ? " (or to off)" : ""}`,
    exit: EXIT_FAILURE,
  },
  {
    aboutHost: true,
    matches: code("EADDRNOTAVAIL"),
    problem: () => "no interface of this machine has that address",
    remedy: (s) => `set ${s} to an address of this machine`,
    exit: EXIT_SETTING,
  },
  {
    matches: (e) => code("EACCES")(e) && e.syscall === "listen",
    problem: () => "this user may not listen on that port (below 1024)",
    remedy: (s) => `set ${s} to a port from 1024 up`,
    exit: EXIT_SETTING,
  },
  // Files and folders.
  {
    matches: code("ENOENT"),
    problem: (e) => `no such file or folder${e.path ? ` (${e.path})` : ""}`,
    remedy: (s) => `create it or set ${s} to an existing one`,
    exit: EXIT_SETTING,
  },
  {
    matches: code("EACCES", "EPERM"),
    problem: (e) => `permission denied${e.path ? ` on ${e.path}` : ""}`,
    remedy: (s) => `give this user access (chown or chmod) or set ${s} to a place it may use`,
    exit: EXIT_FAILURE,
  },
  {
    matches: code("EROFS"),
    problem: () => "the file system is read-only",
    remedy: (s) => `set ${s} to a writable place`,
    exit: EXIT_SETTING,
  },
  { matches: code("EISDIR"), problem: () => "that is a folder, not a file", remedy: (s) => `set ${s} to a file`, exit: EXIT_SETTING },
  {
    matches: code("ENOTDIR", "EEXIST"), // EEXIST: mkdir met a file where the path needs a folder
    problem: () => "a part of that path is a file, not a folder",
    remedy: (s) => `set ${s} to a path in a folder`,
    exit: EXIT_SETTING,
  },
  // SQLite (better-sqlite3's SqliteError codes).
  {
    matches: (e, s, v) => isDb(s) && code("SQLITE_CANTOPEN")(e) && isFolder(v),
    problem: () => "that is a folder, not a database file",
    remedy: () => "set MERIDIAN_DB to a file path (in that folder, say)",
    exit: EXIT_SETTING,
  },
  {
    matches: (e, s) => isDb(s) && code("SQLITE_CANTOPEN")(e),
    problem: (_e, v) => `SQLite cannot open or create the file: this user may not write in its folder ${folderOf(v)}`,
    remedy: () => "give this user write access to that folder (chown or chmod) or set MERIDIAN_DB to a file in a folder it may write in",
    exit: EXIT_FAILURE,
  },
  {
    matches: (e, s) => isDb(s) && code("SQLITE_NOTADB")(e),
    problem: () => "that file is not a SQLite database",
    remedy: () => "set MERIDIAN_DB to the server's database file (or a path where none exists yet, for meridian init)",
    exit: EXIT_SETTING,
  },
  {
    matches: (e, s) =>
      isDb(s) &&
      (code("SQLITE_READONLY", "SQLITE_READONLY_DIRECTORY", "SQLITE_READONLY_DBMOVED")(e) || e.message.includes("readonly database")),
    problem: () => "the database file (or its folder) is read-only for this user",
    remedy: () => "run as the file's owner or give this user write access to the file and its folder",
    exit: EXIT_FAILURE,
  },
  {
    matches: (e, s) => isDb(s) && code("SQLITE_CORRUPT")(e),
    problem: () => "the database file is damaged",
    remedy: () => "restore it from a backup (README: Backup)",
    exit: EXIT_FAILURE,
  },
  {
    matches: (e, s) => isDb(s) && /schema version \d+ is newer/.test(e.message),
    problem: (e) => e.message,
    remedy: () => "",
    exit: EXIT_FAILURE,
  },
  // PostgreSQL (postgres.js: socket errors, its own codes, SQLSTATEs).
  {
    matches: code("ECONNREFUSED"),
    problem: () => "nothing accepts connections at that host and port (connection refused)",
    remedy: () => "start PostgreSQL or correct the host and port in MERIDIAN_DB",
    exit: EXIT_FAILURE,
  },
  {
    aboutHost: true,
    matches: code("ENOTFOUND", "EAI_AGAIN"),
    problem: () => "that host name does not resolve",
    remedy: (s) => (isDb(s) ? "correct the host in MERIDIAN_DB" : `set ${s} to a name or address of this machine`),
    exit: EXIT_SETTING,
  },
  {
    matches: code("CONNECT_TIMEOUT", "ETIMEDOUT", "EHOSTUNREACH"),
    problem: () => "PostgreSQL did not answer in time",
    remedy: () => "check that it runs and is reachable from here, or raise MERIDIAN_PG_CONNECT_TIMEOUT_S",
    exit: EXIT_FAILURE,
  },
  {
    // postgres.js tries TLS even after the server said no, and the server hangs up.
    matches: (e, s, v) => isDb(s) && /[?&]sslmode=(require|verify-ca|verify-full)\b/.test(v) && e.message.includes("secure TLS connection"),
    problem: () => "the PostgreSQL server does not take TLS connections, and sslmode asks for TLS",
    remedy: () => "turn ssl on in the server's postgresql.conf, or drop sslmode from MERIDIAN_DB (or set sslmode=prefer)",
    exit: EXIT_SETTING,
  },
  {
    matches: code("28P01"),
    problem: () => "PostgreSQL refused the user name or password",
    remedy: () => "correct the user and password in MERIDIAN_DB",
    exit: EXIT_SETTING,
  },
  {
    matches: code("28000"),
    problem: (e) => `PostgreSQL refused the connection (${e.message})`,
    remedy: () => "allow this user and host in pg_hba.conf or correct MERIDIAN_DB",
    exit: EXIT_SETTING,
  },
  {
    matches: code("3D000"),
    problem: (e) => `PostgreSQL has no such database (${e.message})`,
    remedy: () => "create it (createdb) or correct the database name in MERIDIAN_DB",
    exit: EXIT_SETTING,
  },
  {
    matches: code("57P03", "53300"),
    problem: (e) => `PostgreSQL cannot take the connection now (${e.message})`,
    remedy: () => "try again once it has started or has free connections",
    exit: EXIT_FAILURE,
  },
  {
    matches: code("42501"),
    problem: (e) => `the PostgreSQL user lacks a privilege (${e.message})`,
    remedy: () => "grant it the rights to create tables in the database, or use its owner in MERIDIAN_DB",
    exit: EXIT_SETTING,
  },
  // Contents of files a setting names.
  {
    matches: (e) => e instanceof SyntaxError,
    problem: (e) => `that file is not JSON (${e.message})`,
    remedy: (s) => `set ${s} to a JSON file`,
    exit: EXIT_SETTING,
  },
  {
    matches: (e) => /^ERR_JWKS|^ERR_JOSE/.test(e.code ?? ""),
    problem: (e) => `that is not a JSON Web Key Set (${e.message})`,
    remedy: (s) => `set ${s} to a JWKS file ({"keys": [...]})`,
    exit: EXIT_SETTING,
  },
  {
    matches: (e) => /^ERR_OSSL|^ERR_TLS/.test(e.code ?? "") || /PEM|key values mismatch/i.test(e.message),
    problem: (e) => `the certificate and key are not a PEM pair that belongs together (${e.message})`,
    remedy: () => "set MERIDIAN_TLS_CERT and MERIDIAN_TLS_KEY to a PEM certificate and its private key",
    exit: EXIT_SETTING,
  },
];

/** A setting and its value as the operator gave it. */
export interface Named {
  setting: string;
  value: string;
}

/**
 * The error an operator reads for a failure of a step that uses `setting`; an error nobody
 * foresaw keeps its message and exits 1. A step that also uses a host setting (listening on
 * MERIDIAN_HOST and MERIDIAN_PORT) names that one when the error is about the host.
 */
export function translate(e: unknown, setting: string, value: string, host?: Named): OperatorError {
  if (e instanceof OperatorError) return e;
  const failure: Failure = e instanceof Error ? e : new Error(String(e));
  const row = TRANSLATIONS.find((t) => t.matches(failure, setting, value));
  if (!row) return new OperatorError(setting, value, failure.message, "", EXIT_FAILURE, { cause: e });
  const named = row.aboutHost && host ? host : { setting, value };
  return new OperatorError(
    named.setting,
    named.value,
    row.problem(failure, named.value),
    row.remedy(named.setting),
    row.exit as typeof EXIT_SETTING,
    {
      cause: e,
    },
  );
}

/** Runs a step that uses `setting` (and `host`, see translate); its failure is translated into one line for the operator. */
export async function underSetting<T>(setting: string, value: string, step: () => T | Promise<T>, host?: Named): Promise<T> {
  try {
    return await step();
  } catch (e) {
    throw translate(e, setting, value, host);
  }
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function folderOf(path: string): string {
  const i = path.lastIndexOf("/");
  return i < 0 ? "." : i === 0 ? "/" : path.slice(0, i);
}
