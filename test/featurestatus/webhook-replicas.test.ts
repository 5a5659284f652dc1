// D63 with replicas on one PostgreSQL database (D40): writes on both, the
// clock's events written by both schedulers, and each event delivered once.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pino } from "pino";
import { startMeridian, type Meridian } from "../../src/app/app.js";
import { loadSettings } from "../../src/config/settings.js";
import { freshPgDatabase } from "../helpers/postgres.js";
import { TEST_BACKEND } from "../helpers/server.js";
import { RW, draft, iso } from "../helpers/messages.js";
import { SECRET, signatureValid, startReceiver, WEBHOOK_ENV } from "../helpers/webhooks.js";

const SKIP =
  TEST_BACKEND !== "postgres" ? "PostgreSQL only: replicas share a PostgreSQL database (MERIDIAN_TEST_BACKEND=postgres)" : undefined;

describe.skipIf(SKIP !== undefined)(`D63 replicas${SKIP ? ` (${SKIP})` : ""}`, () => {
  let pg: Awaited<ReturnType<typeof freshPgDatabase>>;
  let replicas: Meridian[];
  let key: string;
  beforeAll(async () => {
    pg = await freshPgDatabase();
    const settings = loadSettings({ MERIDIAN_PORT: "0", MERIDIAN_METRICS: "off", MERIDIAN_DB: pg.url, ...WEBHOOK_ENV });
    replicas = [];
    for (let i = 0; i < 2; i++) replicas.push(await startMeridian(settings, pino({ level: "silent" })));
    key = (await replicas[0].backend.apiKeys.create({ clientId: "bo", projects: [], ...RW })).key;
  });
  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.close(1000)));
    await pg.drop();
  });

  it("D63 on two replicas each event is delivered once, in order per message, the clock's message.started included", async () => {
    const rx = await startReceiver();
    try {
      const call = (i: number, method: string, path: string, body: unknown) =>
        fetch(replicas[i % 2].url + path, {
          method,
          headers: { "svc-open-api-key": key, "content-type": "application/json" },
          body: JSON.stringify(body),
        }).then((r) => r.json());
      await call(0, "POST", "/api/admin/feature/message/webhooks", { url: rx.url, secret: SECRET });
      const ids: number[] = [];
      for (let i = 0; i < 20; i++) {
        const m = await call(
          i,
          "POST",
          "/api/admin/feature/replicas/message",
          draft({ title: `m${i}`, startDate: i === 0 ? iso(2) : iso(-60) }),
        );
        ids.push(m.id);
        await call(i + 1, "PATCH", `/api/admin/feature/replicas/message/${m.id}`, { title: `m${i} v2` });
      }
      const expected = 20 * 2 + 1; // each created and updated, and m0 started
      await rx.until((r) => r.length >= expected, 20_000);
      await new Promise((r) => setTimeout(r, 2500)); // time for a duplicate to show
      expect(rx.received).toHaveLength(expected);
      expect(new Set(rx.received.map((r) => r.body.id)).size).toBe(expected);
      expect(rx.received.every((r) => signatureValid(r))).toBe(true);
      for (const id of ids) {
        const types = rx.received.filter((r) => r.body.data.message.id === id).map((r) => r.body.type);
        expect(types.slice(0, 2)).toEqual(["message.created", "message.updated"]);
      }
      expect(rx.received.filter((r) => r.body.type === "message.started").map((r) => r.body.data.message.id)).toEqual([ids[0]]);
    } finally {
      await rx.close();
    }
  });
  it("D63 lanes send under the turn's lock: a delivery a hanging receiver holds is not sent by the other replica meanwhile (issue 39 item 1)", async () => {
    const hanging = await startReceiver(() => "hang");
    const quick = await startReceiver();
    const call = (i: number, method: string, path: string, body?: unknown) =>
      fetch(replicas[i % 2].url + path, {
        method,
        headers: { "svc-open-api-key": key, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      }).then((r) => (r.status === 204 ? undefined : r.json()));
    const hooks: { id: string }[] = [];
    try {
      for (const rx of [hanging, quick])
        hooks.push(
          await call(0, "POST", "/api/admin/feature/message/webhooks", { url: rx.url, secret: SECRET, events: ["message.created"] }),
        );
      const t0 = Date.now();
      for (let i = 0; i < 4; i++) {
        const m = await call(i, "POST", "/api/admin/feature/lanes/message", draft({ title: `lane ${i}` }));
        const before = Date.now();
        await quick.until((r) => r.some((x) => x.body.data.message.id === m.id), 4000);
        expect(Date.now() - before).toBeLessThan(1500); // written on either replica, sent at once
      }
      await hanging.until((r) => r.length >= 4, 4000);
      await new Promise((r) => setTimeout(r, Math.max(0, 4000 - (Date.now() - t0)))); // still within the first 5 s timeout
      expect(new Set(hanging.received.map((r) => r.body.id)).size).toBe(hanging.received.length); // none sent twice at once
      expect(quick.received).toHaveLength(4);
    } finally {
      for (const h of hooks) await call(0, "DELETE", `/api/admin/feature/message/webhooks/${h.id}`);
      await hanging.close();
      await quick.close();
    }
  });
});
