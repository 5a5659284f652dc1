// A write that met another's lock (D51) fails with this error: the request
// layer retries it (transport/database-retry-interceptor.ts), the retention cleanup skips a turn.
// Named here, below both, so that neither reaches into the other.

/** SQLITE_BUSY and its extended codes (_SNAPSHOT, _RECOVERY, _TIMEOUT), as better-sqlite3 names them. */
export function isBusy(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("SQLITE_BUSY");
}
