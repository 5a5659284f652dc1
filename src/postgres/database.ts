// The PostgreSQL connection pool (D40), with the bounds that keep a replica
// answering while the database is away: a connect timeout, a statement
// timeout on every connection, a pool of fixed size, and a short reconnect
// backoff. MERIDIAN_DB may name several hosts (D70): every connection finds
// the one that is the primary of the moment by itself, on each (re)connect.
import postgres from "postgres";

export type Sql = postgres.Sql;

export interface PgOptions {
  url: string;
  /** Connections per process. */
  poolSize: number;
  /** Longest a statement may run before the database cancels it. */
  statementTimeoutMs: number;
  /** Longest a connection attempt may take. */
  connectTimeoutS: number;
  /** D71: where LISTEN connects when `url` goes through a transaction pooler (MERIDIAN_DB_LISTEN); else `url`. */
  listenUrl?: string;
}

/** Whether MERIDIAN_DB names a PostgreSQL database rather than a SQLite file. */
export function isPostgresUrl(db: string): boolean {
  return /^postgres(ql)?:\/\//i.test(db);
}

/**
 * Seconds a connection waits before its next attempt after `retries` failed
 * ones. postgres.js's default, 0.5-1 x min(3^n / 100, 20) s with one counter
 * for the whole pool, reaches 10-20 s within a second or two of an outage
 * (ten connections failing at once), and its connect timeout only starts
 * after that wait: requests then waited 14-20 s after the database was back.
 * Here the wait is at most half a second, jittered so replicas do not all
 * come back at the same instant; connections are only tried when a request
 * needs one, so a dead database costs at most a few attempts a second each.
 */
export function reconnectBackoffS(retries: number): number {
  return Math.min(0.05 * 2 ** retries, 0.5) * (0.5 + Math.random() / 2);
}

/**
 * The URL's target_session_attrs, as postgres.js must be told it (D70).
 * postgres.js 3.4.9 takes "read-write" to mean default_transaction_read_only
 * = off, which a hot standby of PostgreSQL 14+ reports at connect (its
 * read-only state is in_hot_standby): on a multi-host URL it would connect
 * to a standby, whose writes fail (SQLSTATE 25006), as soon as the primary
 * is away. libpq reads both; "primary" makes postgres.js read in_hot_standby,
 * which is what a Patroni cluster's primary differs by.
 */
export function sessionAttrs(url: string): { target_session_attrs?: "primary" | "read-only" | "standby" | "prefer-standby" } {
  const attrs = /[?&]target_session_attrs=([^&#]*)/.exec(url)?.[1];
  switch (attrs) {
    case "read-write":
    case "primary":
      return { target_session_attrs: "primary" };
    case "read-only":
    case "standby":
    case "prefer-standby":
      return { target_session_attrs: attrs };
    default:
      return {}; // "any" or none: the first host that accepts
  }
}

/** The hosts a URL names ("h1:5432,h2:5432"), for messages; one host is a list of one. */
export function urlHosts(url: string): string[] {
  const authority = /^[a-z]+:\/\/(?:[^@/?#]*@)?([^/?#]*)/i.exec(url)?.[1] ?? "";
  return decodeURIComponent(authority).split(",").filter(Boolean);
}

function options(o: PgOptions, url = o.url) {
  return {
    ...sessionAttrs(url),
    connect_timeout: o.connectTimeoutS,
    backoff: reconnectBackoffS,
    connection: { statement_timeout: o.statementTimeoutMs, application_name: "meridian" },
    onnotice: () => {},
    // Epoch seconds and row counts are int8 columns; they fit a double exactly (D24 bounds them).
    types: { int8: { to: 20, from: [20], serialize: (n: number) => String(n), parse: (s: string) => Number(s) } },
  };
}

export function connectPostgres(o: PgOptions): Sql {
  return postgres(o.url, { ...options(o), max: o.poolSize, idle_timeout: 60 });
}

/**
 * One connection of its own for LISTEN (changes.ts), kept open for good (no
 * idle or life timeout): `onclose` tells each time it is lost or an attempt
 * to open it failed, and it opens again at the next statement.
 */
export function connectListener(o: PgOptions, on: { notify: (channel: string, payload: string) => void; close: () => void }): Sql {
  // postgres.js reads `onnotify` (its own listen() uses it) but does not declare it.
  const untyped = { onnotify: on.notify };
  const url = o.listenUrl || o.url;
  return postgres(url, {
    ...options(o, url),
    ...untyped,
    max: 1,
    idle_timeout: undefined,
    max_lifetime: null,
    fetch_types: false,
    onclose: on.close,
  });
}

/** The URL with its password hidden, for logs and messages. */
export function displayUrl(url: string): string {
  // Several hosts (D70) are no WHATWG URL: the password is hidden by hand.
  if (urlHosts(url).length > 1) return url.replace(/^([a-z]+:\/\/[^:@/?#]*:)[^@/?#]*@/i, "$1***@");
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "postgres://(unparsable URL)";
  }
}
