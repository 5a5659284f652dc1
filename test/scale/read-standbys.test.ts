// D71 reads from standbys: with MERIDIAN_DB_READ, listings and the value
// blocks behind values, charts, Arrow and Parquet are read from standbys of
// the Patroni cluster; a read shows every write committed before it began
// (a caller reads its own writes, on either replica); a standby too far
// behind is left out, and used again once it has caught up. Needs
// scripts/with-patroni.sh (.ci/run); skipped without it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import postgres from "postgres";
import { pino } from "pino";
import { startMeridian, type Meridian } from "../../src/app/app.js";
import { loadSettings } from "../../src/config/settings.js";
import { draft } from "../helpers/messages.js";
import { PATRONI_DB, PATRONI_SKIP_REASON, freshClusterDatabase, members, type Member } from "../helpers/patroni.js";

const RW = { clientId: "ops", roles: ["BackOffice"], scopes: ["platform_iam_featurestatus_readwrite"], projects: [] };
const TS = { clientId: "ts", roles: [], scopes: ["platform_timeseries_readwrite"], projects: ["p"] };
const WAIT_MS = 300;

async function replica(url: string, readUrl: string): Promise<Meridian> {
  const settings = loadSettings({
    MERIDIAN_PORT: "0",
    MERIDIAN_METRICS: "public",
    MERIDIAN_DB: url,
    MERIDIAN_DB_READ: readUrl,
    MERIDIAN_DB_READ_WAIT_MS: String(WAIT_MS),
    MERIDIAN_PG_CONNECT_TIMEOUT_S: "2",
    MERIDIAN_PG_STATEMENT_TIMEOUT_MS: "2000",
  });
  return startMeridian(settings, pino({ level: "silent" }));
}

async function call(r: Meridian, key: string, method: string, path: string, body?: unknown) {
  const dataset = /^\/api\/ts\/dataset\/([^/?]+)/.exec(path)?.[1];
  const ts = path.startsWith("/api/ts/")
    ? { "svc-service-id": "timeseries", "svc-project-id": "p", ...(dataset ? { "svc-dataset-id": dataset } : {}) }
    : {};
  const res = await fetch(r.url + path, {
    method,
    headers: { "svc-open-api-key": key, "content-type": "application/json", ...ts },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
}

/** A URL of the cluster's standbys only (with a database), as an operator would write MERIDIAN_DB_READ. */
function standbysUrl(ms: Member[], database: string): string {
  return `postgres://meridian@${ms
    .filter((m) => m.role !== "leader")
    .map((m) => `${m.host}:${m.port}`)
    .join(",")}/${database}`;
}

describe.skipIf(!PATRONI_DB)("D71 reads from standbys", () => {
  let db: Awaited<ReturnType<typeof freshClusterDatabase>>;
  let a: Meridian;
  let b: Meridian;
  let key: string;
  let tsKey: string;
  let values: string;
  let standbys: Member[];
  const admin: postgres.Sql[] = [];
  /** A connection to a standby as the superuser, to pause and resume its replay. */
  const on = (m: Member) => {
    const s = postgres({ host: m.host, port: m.port, user: "meridian", database: "postgres", max: 1, onnotice: () => {} });
    admin.push(s);
    return s;
  };

  beforeAll(async () => {
    db = await freshClusterDatabase();
    const ms = await members();
    standbys = ms.filter((m) => m.role !== "leader");
    [a, b] = [await replica(db.url, standbysUrl(ms, db.name)), await replica(db.url, standbysUrl(ms, db.name))];
    key = (await a.backend.apiKeys.create(RW)).key;
    tsKey = (await a.backend.apiKeys.create(TS)).key;
    const d = (await call(a, tsKey, "POST", "/api/ts/dataset", {})).json.id as string;
    const s = (
      await call(a, tsKey, "POST", `/api/ts/dataset/${d}/timeseries`, {
        item: { name: "level" },
        dataFields: [{ name: "v", dataType: "Double" }],
      })
    ).json.id as string;
    values = `/api/ts/dataset/${d}/timeseries/${s}/values`;
  }, 60_000);
  afterAll(async () => {
    for (const s of admin) await s`SELECT pg_wal_replay_resume()`.catch(() => {});
    await Promise.all(admin.map((s) => s.end({ timeout: 1 })));
    await Promise.all([a?.close(500), b?.close(500)]);
    await db?.drop();
  }, 30_000);

  it("D71 listings, values and charts are read from standbys, and show what was written", async () => {
    const before = { ...a.backend.reads!.counts };
    const m = await call(a, key, "POST", "/api/admin/feature/reads/message", draft({ title: "one" }));
    expect(m.status).toBe(201);
    const rows = Array.from({ length: 100 }, (_, i) => [new Date(Date.UTC(2021, 0, 1, 0, i)).toISOString().slice(0, 19), i]);
    expect((await call(a, tsKey, "POST", values, { data: rows })).status).toBe(200);
    const listed = await call(a, key, "GET", "/api/admin/feature/reads/message");
    expect((listed.json.data as { id: number }[]).map((x) => x.id)).toEqual([m.json.id]);
    const read = await call(a, tsKey, "GET", values);
    expect(read.json.data).toEqual(rows);
    const chart = await call(a, tsKey, "GET", `${values}/chart?width=10`);
    expect(chart.status).toBe(200);
    const after = a.backend.reads!.counts;
    expect(after.standby - before.standby).toBeGreaterThanOrEqual(3);
    expect(after.primary - before.primary).toBe(0);
  });

  it("D71 a caller reads its own writes: the read right after each write shows it, listings and values, on either replica", async () => {
    let missed = 0;
    for (let i = 0; i < 40; i++) {
      const w = await call(i % 2 ? a : b, key, "POST", "/api/admin/feature/ryw/message", draft({ title: `w${i}` }));
      expect(w.status).toBe(201);
      const here = await call(i % 2 ? a : b, key, "GET", "/api/admin/feature/ryw/message?limit=1000");
      if (!(here.json.data as { id: number }[]).some((x) => x.id === w.json.id)) missed++;
      const at = new Date(Date.UTC(2022, 0, 1, 0, 0, i)).toISOString().slice(0, 19);
      expect((await call(i % 2 ? b : a, tsKey, "POST", values, { data: [[at, i]] })).status).toBe(200);
      const back = await call(i % 2 ? b : a, tsKey, "GET", `${values}?from=${at}`);
      if ((back.json.data as [string][])[0]?.[0] !== at) missed++;
    }
    const there = await call(a, key, "GET", "/api/admin/feature/ryw/message?limit=1000");
    expect((there.json.data as unknown[]).length).toBe(40);
    expect(missed).toBe(0);
    // Each listing after a write is read (the cache knows it changed); value reads may be served by the block cache.
    expect(a.backend.reads!.counts.standby + b.backend.reads!.counts.standby).toBeGreaterThanOrEqual(40);
  });

  it("D71 a standby too far behind is left out: reads wait at most the bound, then go to the other standby or the primary; it serves again once it has caught up", async () => {
    const [s1, s2] = standbys.map(on);
    const reads = a.backend.reads!;
    // One standby stops replaying: reads still show every write (from the other).
    await s1`SELECT pg_wal_replay_pause()`;
    for (let i = 0; i < 10; i++) {
      const w = await call(a, key, "POST", "/api/admin/feature/lag/message", draft({ title: `p${i}` }));
      const t0 = performance.now();
      const listed = await call(a, key, "GET", "/api/admin/feature/lag/message?limit=1000");
      expect((listed.json.data as { id: number }[]).some((x) => x.id === w.json.id)).toBe(true);
      expect(performance.now() - t0).toBeLessThan(WAIT_MS + 1_000);
    }
    // Both stop: reads go to the primary after at most the wait, and still show every write.
    await s2`SELECT pg_wal_replay_pause()`;
    const primaryBefore = reads.counts.primary;
    for (let i = 0; i < 5; i++) {
      const w = await call(a, key, "POST", "/api/admin/feature/lag/message", draft({ title: `q${i}` }));
      const t0 = performance.now();
      const listed = await call(a, key, "GET", "/api/admin/feature/lag/message?limit=1000");
      expect((listed.json.data as { id: number }[]).some((x) => x.id === w.json.id)).toBe(true);
      expect(performance.now() - t0).toBeLessThan(WAIT_MS + 1_000);
    }
    expect(reads.counts.primary - primaryBefore).toBeGreaterThanOrEqual(5);
    // Caught up again: reads go back to the standbys.
    await s1`SELECT pg_wal_replay_resume()`;
    await s2`SELECT pg_wal_replay_resume()`;
    await new Promise((z) => setTimeout(z, 500));
    const standbyBefore = reads.counts.standby;
    for (let i = 0; i < 5; i++) {
      // A write first: an unchanged listing is served from the cache, not read.
      const w = await call(a, key, "POST", "/api/admin/feature/lag/message", draft({ title: `r${i}` }));
      const listed = await call(a, key, "GET", "/api/admin/feature/lag/message?limit=1000");
      expect((listed.json.data as { id: number }[]).some((x) => x.id === w.json.id)).toBe(true);
    }
    expect(reads.counts.standby - standbyBefore).toBeGreaterThanOrEqual(4);
  });
});

describe("D71 MERIDIAN_DB_READ", () => {
  it("D71 MERIDIAN_DB_READ naming another database than MERIDIAN_DB, or beside a SQLite file, is refused at start, naming the setting", () => {
    expect(() =>
      loadSettings({ MERIDIAN_DB: "postgres://m@h1:5432/meridian", MERIDIAN_DB_READ: "postgres://m@h2:5432,h3:5432/other" }),
    ).toThrow(/^MERIDIAN_DB_READ=postgres:\/\/m@h2:5432,h3:5432\/other: names database "other", MERIDIAN_DB "meridian"/);
    expect(() => loadSettings({ MERIDIAN_DB: "./data/m.db", MERIDIAN_DB_READ: "postgres://m@h2:5432/meridian" })).toThrow(
      /but MERIDIAN_DB is not a PostgreSQL URL/,
    );
    expect(() => loadSettings({ MERIDIAN_DB_READ: "mysql://h/x" })).toThrow(/^MERIDIAN_DB_READ=mysql:\/\/h\/x: is not a postgres:\/\/ URL/);
    expect(
      loadSettings({ MERIDIAN_DB: "postgres://m@h1:5432/meridian", MERIDIAN_DB_READ: "postgres://m@h2:5432,h3:5432/meridian" }).dbRead,
    ).toBe("postgres://m@h2:5432,h3:5432/meridian");
  });
});

describe.skipIf(PATRONI_DB)("D71 reads from standbys", () => {
  it.skip(PATRONI_SKIP_REASON, () => {});
});
