// Jobs that must run once per interval across every replica on the database
// (D22 retention cleanup, D40): the first replica whose timer fires takes a
// transaction-scoped advisory lock, checks when the job last ran, and runs it
// only if a whole interval has passed; the others skip. The run time is
// recorded in the same transaction, so a failed run is retried next time.
import type { Sql } from "./database.js";

/** Runs `fn` unless another replica ran job `name` less than `intervalS` ago (or is running it); undefined when skipped. */
export async function oncePerInterval<T>(sql: Sql, name: string, intervalS: number, fn: () => Promise<T>): Promise<T | undefined> {
  return sql.begin(async (tx) => {
    const [{ locked }] = await tx<{ locked: boolean }[]>`SELECT pg_try_advisory_xact_lock(hashtext(${"meridian.job." + name})) AS locked`;
    if (!locked) return undefined;
    // A little slack: replicas' timers started at different moments must not each find the interval not yet over.
    const recent = (
      await tx`SELECT 1 FROM job_runs WHERE name = ${name} AND last_at > now() - make_interval(secs => ${intervalS * 0.9})`
    ).at(0);
    if (recent) return undefined;
    const out = await fn();
    await tx`INSERT INTO job_runs (name, last_at) VALUES (${name}, now()) ON CONFLICT (name) DO UPDATE SET last_at = excluded.last_at`;
    return out;
  }) as Promise<T | undefined>;
}
