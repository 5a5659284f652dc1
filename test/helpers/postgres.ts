// PostgreSQL for the tests (D40): MERIDIAN_TEST_PG names a server to use
// (.ci/run starts a throwaway cluster and sets it); each user gets a database
// of its own, dropped afterwards. Without it the PostgreSQL cases are skipped,
// and vitest's global setup says so once.
import { randomBytes } from "node:crypto";
import postgres from "postgres";

export const PG_URL = process.env.MERIDIAN_TEST_PG || undefined;
/**
 * A server of its own for the tests that stop, crash and restart it
 * (scripts/with-postgres.sh), with MERIDIAN_TEST_PG_CTL, the pg_ctl command
 * line for it: the tests running beside them never see the outage.
 */
export const PG_FAULTS_URL = (process.env.MERIDIAN_TEST_PG_CTL && process.env.MERIDIAN_TEST_PG_FAULTS) || undefined;
export const PG_SKIP_REASON = "PostgreSQL part skipped: MERIDIAN_TEST_PG is not set (.ci/run starts a throwaway cluster and sets it)";

/** A new, empty database on the test server (or `server`); drop() removes it, ending its sessions. */
export async function freshPgDatabase(server = PG_URL): Promise<{ url: string; drop: () => Promise<void> }> {
  if (!server) throw new Error(PG_SKIP_REASON);
  const name = `meridian_t_${randomBytes(6).toString("hex")}`;
  const admin = postgres(server, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(server);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const a = postgres(server, { max: 1, onnotice: () => {} });
      try {
        await a.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await a.end();
      }
    },
  };
}
