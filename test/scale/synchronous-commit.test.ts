// D70: with synchronous replication a 2xx means the write is on two machines.
// A COMMIT waits for the synchronous standby to confirm. Had the statement
// timeout cancelled that wait, PostgreSQL would have kept the commit on the
// primary alone and reported success, and the standby Patroni promotes would
// lack it; it does not (PostgreSQL stops the statement timer before a commit),
// and this test holds that: while the standby does not confirm, the caller
// gets a 503 at the wait limit (outcome unknown, as for a connection lost
// mid-commit), never a 2xx.
// Needs scripts/with-patroni.sh (.ci/run); skipped without it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import postgres from "postgres";
import { pino } from "pino";
import { startMeridian, type Meridian } from "../../src/app/app.js";
import { loadSettings } from "../../src/config/settings.js";
import { draft } from "../helpers/messages.js";
import { PATRONI_DB, PATRONI_SKIP_REASON, freshClusterDatabase, members, until, type Member } from "../helpers/patroni.js";

const RW = { clientId: "ops", roles: ["BackOffice"], scopes: ["platform_iam_featurestatus_readwrite"], projects: [] };
const TS = { clientId: "ts", roles: [], scopes: ["platform_timeseries_readwrite"], projects: ["p"] };

describe.skipIf(!PATRONI_DB)("D70 synchronous commit", () => {
  let db: Awaited<ReturnType<typeof freshClusterDatabase>>;
  let app: Meridian;
  let key: string;
  let tsKey: string;
  let values: string;

  beforeAll(async () => {
    db = await freshClusterDatabase();
    app = await startMeridian(
      loadSettings({
        MERIDIAN_PORT: "0",
        MERIDIAN_DB: db.url,
        MERIDIAN_PG_CONNECT_TIMEOUT_S: "2",
        MERIDIAN_PG_STATEMENT_TIMEOUT_MS: "1000",
      }),
      pino({ level: "silent" }),
    );
    key = (await app.backend.apiKeys.create(RW)).key;
    tsKey = (await app.backend.apiKeys.create(TS)).key;
    const ts = { "svc-open-api-key": tsKey, "content-type": "application/json", "svc-service-id": "timeseries", "svc-project-id": "p" };
    const d = ((await (await fetch(`${app.url}/api/ts/dataset`, { method: "POST", headers: ts, body: "{}" })).json()) as { id: string }).id;
    const s = (
      (await (
        await fetch(`${app.url}/api/ts/dataset/${d}/timeseries`, {
          method: "POST",
          headers: { ...ts, "svc-dataset-id": d },
          body: JSON.stringify({ item: { name: "level" }, dataFields: [{ name: "v", dataType: "Double" }] }),
        })
      ).json()) as { id: string }
    ).id;
    values = `/api/ts/dataset/${d}/timeseries/${s}/values`;
  }, 60_000);
  afterAll(async () => {
    await app?.close(500);
    await db?.drop();
  }, 30_000);

  it(
    "D70 a write the synchronous standby has not confirmed is never acknowledged, however long the statement timeout is past",
    { timeout: 60_000 },
    async () => {
      expect(await until(async () => (await members()).some((m) => m.role === "sync_standby"), 30_000)).toBe(true);
      const standby = (await members()).find((m) => m.role === "sync_standby") as Member;
      const on = postgres({ host: standby.host, port: standby.port, user: "meridian", database: "postgres", max: 1, onnotice: () => {} });
      let receiver = 0;
      try {
        // The standby's WAL receiver, stopped: it neither writes nor confirms what the primary sends.
        receiver = (await on<{ pid: number }[]>`SELECT pid FROM pg_stat_wal_receiver`)[0].pid;
        process.kill(receiver, "SIGSTOP");
        const dataset = /^\/api\/ts\/dataset\/([^/]+)/.exec(values)![1];
        const [message, upload] = await Promise.all([
          fetch(`${app.url}/api/admin/feature/sync/message`, {
            method: "POST",
            headers: { "svc-open-api-key": key, "content-type": "application/json" },
            body: JSON.stringify(draft({ title: "unconfirmed" })),
          }),
          fetch(`${app.url}${values}`, {
            method: "POST",
            headers: {
              "svc-open-api-key": tsKey,
              "content-type": "application/json",
              "svc-service-id": "timeseries",
              "svc-project-id": "p",
              "svc-dataset-id": dataset,
            },
            body: JSON.stringify({ data: [["2024-01-01T00:00:00", 1]] }),
          }),
        ]);
        // The wait limit (connect plus statement timeout) answers: the outcome is unknown, so not a 2xx.
        expect([message.status, upload.status]).toEqual([503, 503]);
        expect(message.headers.get("retry-after")).toBeTruthy();
      } finally {
        if (receiver) process.kill(receiver, "SIGCONT");
        await on.end({ timeout: 1 });
      }
      // Once the standby confirms, writes are acknowledged again.
      const after = await fetch(`${app.url}/api/admin/feature/sync/message`, {
        method: "POST",
        headers: { "svc-open-api-key": key, "content-type": "application/json" },
        body: JSON.stringify(draft({ title: "confirmed" })),
      });
      expect(after.status).toBe(201);
    },
  );
});

describe.skipIf(PATRONI_DB)("D70 synchronous commit", () => {
  it.skip(PATRONI_SKIP_REASON, () => {});
});
