// The PostgreSQL connection pool (D40), with the bounds that keep a replica
// answering while the database is away: a connect timeout, a statement
// timeout on every connection, a pool of fixed size.
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
}

/** Whether MERIDIAN_DB names a PostgreSQL database rather than a SQLite file. */
export function isPostgresUrl(db: string): boolean {
  return /^postgres(ql)?:\/\//i.test(db);
}

export function connectPostgres(o: PgOptions): Sql {
  return postgres(o.url, {
    max: o.poolSize,
    connect_timeout: o.connectTimeoutS,
    idle_timeout: 60,
    connection: { statement_timeout: o.statementTimeoutMs, application_name: "meridian" },
    onnotice: () => {},
    // Epoch seconds and row counts are int8 columns; they fit a double exactly (D24 bounds them).
    types: { int8: { to: 20, from: [20], serialize: (n: number) => String(n), parse: (s: string) => Number(s) } },
  });
}

/** The URL with its password hidden, for logs and messages. */
export function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "postgres://(unparsable URL)";
  }
}
