// PostgreSQL for the tests (D40): MERIDIAN_TEST_PG names a server to use
// (.ci/run starts a throwaway cluster and sets it); each user gets a database
// of its own, dropped afterwards. Without it the PostgreSQL cases are skipped,
// and vitest's global setup says so once.
import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { sessionAttrs, urlHosts } from "../../src/postgres/database.js";

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
  const admin = postgres(server, { max: 1, onnotice: () => {}, ...sessionAttrs(server) });
  try {
    await admin.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  await replayedEverywhere(server, name);
  return {
    // By hand, not WHATWG URL: a Patroni cluster's URL names several hosts (D70, scripts/with-patroni.sh).
    url: server.replace(/^(postgres(?:ql)?:\/\/[^/?#]*)(\/[^?#]*)?/i, `$1/${name}`),
    async drop() {
      const a = postgres(server, { max: 1, onnotice: () => {}, ...sessionAttrs(server) });
      try {
        await a.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await a.end();
      }
    },
  };
}

/**
 * On a URL of several hosts (a Patroni cluster, D70): waits until each host
 * has the new database. A connection trying a standby first that has not yet
 * replayed CREATE DATABASE fails (3D000) instead of trying the next host.
 */
async function replayedEverywhere(server: string, name: string): Promise<void> {
  const hosts = urlHosts(server);
  if (hosts.length < 2) return;
  const end = performance.now() + 10_000;
  for (const h of hosts) {
    const [host, port] = h.split(":");
    while (performance.now() < end) {
      const probe = postgres(server, { host, port: Number(port || 5432), database: name, max: 1, connect_timeout: 1, onnotice: () => {} });
      const ok = await probe`SELECT 1`.then(
        () => true,
        () => false,
      );
      await probe.end({ timeout: 1 });
      if (ok) break;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
