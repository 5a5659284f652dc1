// A Patroni cluster for the failover tests (D70, D71): scripts/with-patroni.sh
// starts one and names it in MERIDIAN_DB (the nodes, read-write),
// MERIDIAN_DB_READ, PATRONI_URLS (each node's REST address) and PATRONI_DIR
// (each node's files and a script that starts its Patroni again). Without
// it the tests that need it are skipped, and say why.
import { execFile, execFileSync } from "node:child_process";
import { promisify } from "node:util";
import { randomBytes } from "node:crypto";
import { readFileSync, readdirSync } from "node:fs";
import postgres from "postgres";

export const PATRONI_URLS = process.env.PATRONI_URLS?.split(/\s+/).filter(Boolean) ?? [];
export const PATRONI_DIR = process.env.PATRONI_DIR ?? "";
export const PATRONI_DB = PATRONI_URLS.length && PATRONI_DIR ? process.env.MERIDIAN_DB : undefined;
export const PATRONI_SKIP_REASON =
  "Patroni cluster part skipped: PATRONI_URLS is not set (run it under scripts/with-patroni.sh; .ci/run does, with Debian's patroni and etcd-server)";

export interface Member {
  name: string;
  role: "leader" | "sync_standby" | "replica";
  state: string;
  host: string;
  port: number;
  api_url: string;
  timeline?: number;
  lag?: number | string;
}

/** The cluster as Patroni sees it (asks each node until one answers). */
export async function members(): Promise<Member[]> {
  for (const u of PATRONI_URLS) {
    try {
      const r = await fetch(`${u}/cluster`, { signal: AbortSignal.timeout(1_000) });
      if (r.ok) return ((await r.json()) as { members: Member[] }).members;
    } catch {
      // that node is away: the next
    }
  }
  return [];
}

/** The node number (1..3) of a member: its REST address's position in PATRONI_URLS. */
export function nodeOf(m: Member): number {
  return PATRONI_URLS.indexOf(m.api_url.replace(/\/patroni$/, "")) + 1;
}

export async function leader(): Promise<Member | undefined> {
  return (await members()).find((m) => m.role === "leader");
}

/** Waits until `check` holds, polling every `everyMs`; false at the deadline. */
export async function until(check: () => Promise<boolean> | boolean, ms: number, everyMs = 50): Promise<boolean> {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return check();
}

/** A machine lost: SIGKILL to the node's Patroni, its postmaster and every child of it (no clean shutdown, no goodbye). */
export function killNode(node: number): void {
  const at = `${PATRONI_DIR}/node${node}`;
  const patroni = Number(readFileSync(`${at}/patroni.pid`, "utf8").trim());
  const postmaster = Number(readFileSync(`${at}/data/postmaster.pid`, "utf8").split("\n")[0]);
  const children = readdirSync("/proc")
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return (
          Number(
            readFileSync(`/proc/${p}/stat`, "utf8")
              .replace(/^.*\) /, "")
              .split(" ")[1],
          ) === postmaster
        );
      } catch {
        return false;
      }
    })
    .map(Number);
  for (const pid of [patroni, postmaster, ...children]) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

/** Starts a node's Patroni again (its PostgreSQL rejoins as a standby, rewound if it must be). */
export function startNode(node: number): void {
  execFileSync(`${PATRONI_DIR}/node${node}/start`, { stdio: "ignore" });
}

/** patronictl switchover to `candidate`, now (not blocking this process: the replicas under test run in it). */
export async function switchover(from: string, candidate: string): Promise<void> {
  await promisify(execFile)("patronictl", [
    "-c",
    `${PATRONI_DIR}/node1/patroni.yml`,
    "switchover",
    "--leader",
    from,
    "--candidate",
    candidate,
    "--force",
  ]);
}

/** A URL with its database replaced (works on multi-host URLs, which WHATWG URL does not parse). */
export function withDatabase(url: string, name: string): string {
  return url.replace(/^(postgres(?:ql)?:\/\/[^/?#]*)(\/[^?#]*)?/i, `$1/${name}`);
}

/** A new, empty database on the cluster (through the primary); drop() removes it. */
export async function freshClusterDatabase(server = PATRONI_DB): Promise<{ url: string; name: string; drop: () => Promise<void> }> {
  if (!server) throw new Error(PATRONI_SKIP_REASON);
  const name = `meridian_f_${randomBytes(6).toString("hex")}`;
  const admin = postgres(server, { max: 1, onnotice: () => {}, target_session_attrs: "primary" });
  try {
    await admin.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  // Until the standbys have replayed it, a connection that tries one first fails (3D000) instead of trying the next host.
  for (const m of await members()) {
    await until(async () => {
      const probe = postgres({
        host: m.host,
        port: m.port,
        user: "meridian",
        database: name,
        max: 1,
        connect_timeout: 1,
        onnotice: () => {},
      });
      try {
        await probe`SELECT 1`;
        return true;
      } catch {
        return false;
      } finally {
        await probe.end({ timeout: 1 });
      }
    }, 10_000);
  }
  return {
    url: withDatabase(server, name),
    name,
    async drop() {
      const a = postgres(server, { max: 1, onnotice: () => {}, target_session_attrs: "primary", connect_timeout: 5 });
      try {
        await a.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } catch {
        // the cluster is going away with the run
      } finally {
        await a.end({ timeout: 1 });
      }
    },
  };
}

/** The time a node first answers as a writable primary (a transaction id assigned and committed), polled every 20 ms. */
export async function writableAt(m: { host: string; port: number }, withinMs: number): Promise<number | undefined> {
  const sql = postgres({
    host: m.host,
    port: m.port,
    user: "meridian",
    database: "postgres",
    max: 1,
    connect_timeout: 1,
    backoff: () => 0.01,
    onnotice: () => {},
  });
  try {
    const end = performance.now() + withinMs;
    while (performance.now() < end) {
      try {
        await sql`SELECT txid_current()`;
        return performance.now();
      } catch {
        await new Promise((r) => setTimeout(r, 20));
      }
    }
    return undefined;
  } finally {
    await sql.end({ timeout: 1 });
  }
}
