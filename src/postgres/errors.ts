// Which PostgreSQL failures mean "the database is away or overloaded, try
// again" (503 + Retry-After, gRPC UNAVAILABLE) rather than a defect (500).
const TRANSIENT_CODES = new Set([
  // postgres.js's own connection errors
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
  // Node socket errors
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  // SQLSTATE: statement timeout or cancel, shutdown, starting up, too many connections
  "57014",
  "57P01",
  "57P02",
  "57P03",
  "53300",
  "25006", // read-only transaction: a write met a primary being demoted (D70, Patroni switchover)
  "40001", // serialization failure
  "40P01", // deadlock detected
]);

export function isTransientPgError(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  const code = (e as { code?: unknown }).code;
  if (typeof code !== "string") return false;
  return TRANSIENT_CODES.has(code) || code.startsWith("08"); // class 08: connection exception
}
