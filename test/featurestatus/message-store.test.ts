// One table of cases for every message store (D19, D21, D22, D40): SQLite
// always, PostgreSQL when MERIDIAN_TEST_PG names a server. A second store on
// the same database stands for another replica (or the CLI). Writes go
// through each store's transaction port as the server's do (message-writes.ts).
import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { MessageData, MessageStore } from "../../src/featurestatus/messages/message-store.js";
import type { MessageTransactions } from "../../src/featurestatus/messages/message-transactions.js";
import { MessageWrites } from "../../src/featurestatus/messages/message-writes.js";
import { ChangeBus } from "../../src/featurestatus/live/change-bus.js";
import { SqliteMessageStore } from "../../src/sqlite/message-store.js";
import { PostgresMessageStore } from "../../src/postgres/message-store.js";
import { openDatabase } from "../../src/sqlite/database.js";
import { connectPostgres } from "../../src/postgres/database.js";
import { ChangeFeed } from "../../src/postgres/changes.js";
import { migratePostgres } from "../../src/postgres/schema.js";
import { PG_SKIP_REASON, PG_URL, freshPgDatabase } from "../helpers/postgres.js";

type Store = MessageStore & MessageTransactions & Pick<MessageWrites, "create" | "update" | "delete" | "purgeExpiredBefore">;

interface Pair {
  store: Store;
  /** Another process's store on the same database. */
  other: Store;
  close(): Promise<void>;
}

/** A store with the domain's writes over its transactions, as the server composes them. */
function writing<S extends MessageStore & MessageTransactions>(store: S): S & Store {
  const writes = new MessageWrites(store, new ChangeBus());
  return Object.assign(store, {
    create: writes.create.bind(writes),
    update: writes.update.bind(writes),
    delete: writes.delete.bind(writes),
    purgeExpiredBefore: writes.purgeExpiredBefore.bind(writes),
  });
}

const dir = mkdtempSync(join(tmpdir(), "meridian-msgstore-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const backends: { name: string; open: () => Promise<Pair> }[] = [
  {
    name: "SQLite",
    async open() {
      const file = join(dir, `${Math.random().toString(36).slice(2)}.db`);
      const a = openDatabase(file);
      const b = openDatabase(file);
      return {
        store: writing(new SqliteMessageStore(a)),
        other: writing(new SqliteMessageStore(b)),
        close: async () => void (a.close(), b.close()),
      };
    },
  },
  {
    name: "PostgreSQL",
    async open() {
      const db = await freshPgDatabase();
      const opts = { url: db.url, poolSize: 2, statementTimeoutMs: 5000, connectTimeoutS: 5 };
      const a = connectPostgres(opts);
      const b = connectPostgres(opts);
      await migratePostgres(a);
      const [fa, fb] = [await ChangeFeed.listen(opts), await ChangeFeed.listen(opts)];
      return {
        store: writing(new PostgresMessageStore(a, fa)),
        other: writing(new PostgresMessageStore(b, fb)),
        async close() {
          await Promise.all([a.end(), b.end(), fa.close(), fb.close()]);
          await db.drop();
        },
      };
    },
  },
];

const NOW = 2_000_000_000;
const msg = (over: Partial<MessageData> = {}): MessageData => ({
  featureId: "f",
  type: "Warning",
  dismissible: true,
  title: "t",
  body: "",
  startDate: NOW - 100,
  expiringDate: NOW + 100,
  audiences: [],
  paths: [],
  translations: {},
  ...over,
});

async function until(check: () => boolean, ms = 3000): Promise<boolean> {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
  return check();
}

describe.each(backends)("message store on $name", ({ name, open }) => {
  const skip = name === "PostgreSQL" && !PG_URL;
  if (skip) it.skip(PG_SKIP_REASON, () => {});
  describe.skipIf(skip)("cases", () => {
    it("D47 an update or delete at a version that is no longer stored changes nothing", async () => {
      const p = await open();
      try {
        const row = await p.store.create(msg());
        const v2 = (await p.other.update(row, { ...row, title: "by the other" }))!;
        expect(v2.version).toBe(2);
        expect(await p.store.update(row, { ...row, title: "stale" })).toBeUndefined();
        expect(await p.store.delete(row.id, 1)).toBe(false);
        expect(await p.store.get(row.id)).toEqual(v2);
        expect(await p.store.delete(row.id, 2)).toBe(true);
        expect(await p.store.update(v2, { ...v2, title: "gone" })).toBeUndefined();
      } finally {
        await p.close();
      }
    });

    it("D61 D62 audiences, paths and translations round-trip, through an update and into the audit images", async () => {
      const p = await open();
      try {
        const targeted = {
          audiences: ["staff", "beta"],
          paths: ["/orders/**"],
          translations: { de: { title: "Wartung", body: "<b>bald</b>" } },
        };
        const row = await p.store.create(msg(targeted));
        expect(row).toEqual({ id: row.id, version: 1, ...msg(targeted) });
        expect(await p.other.get(row.id)).toEqual(row);
        const changed = { audiences: [], paths: ["/help"], translations: { fr: { title: "Maintenance", body: "" } } };
        const updated = await p.store.update(row, { ...row, ...changed });
        expect(updated).toEqual({ ...row, ...changed, version: 2 });
        const [entry] = await p.store.listAudit({ messageId: row.id, limit: 1 });
        expect(JSON.parse(entry.before!)).toMatchObject(targeted);
        expect(JSON.parse(entry.after!)).toMatchObject(changed);
        const [listed] = await p.store.list({ featureId: "f", expiry: "All", sortBy: "StartDate", sortOrder: "Desc", limit: 1, now: NOW });
        expect(listed).toEqual(updated);
      } finally {
        await p.close();
      }
    });

    it("D40 insert, get, update and delete round-trip every field", async () => {
      const p = await open();
      try {
        const row = await p.store.create(msg({ featureId: null, title: "a <b>", body: "<p>x</p>" }));
        expect(row).toEqual({ id: row.id, version: 1, ...msg({ featureId: null, title: "a <b>", body: "<p>x</p>" }) });
        expect(await p.other.get(row.id)).toEqual(row);
        const updated = await p.store.update(row, { ...row, title: "b", startDate: NOW - 1 });
        expect(updated).toEqual({ ...row, title: "b", startDate: NOW - 1, version: 2 });
        expect(await p.store.delete(row.id, undefined)).toBe(true);
        expect(await p.store.delete(row.id, undefined)).toBe(false);
        expect(await p.store.get(row.id)).toBeUndefined();
      } finally {
        await p.close();
      }
    });

    it("D19 D21 listings: windows, scope (a feature's and global ones), order with ties broken by id, keyset after", async () => {
      const p = await open();
      try {
        const active = await p.store.create(msg({ title: "active" }));
        const tie = await p.store.create(msg({ title: "tie" })); // same start as active
        await p.store.create(msg({ featureId: null, title: "global", startDate: NOW - 50 }));
        await p.store.create(msg({ featureId: "other", title: "other feature" }));
        const pending = await p.store.create(msg({ title: "pending", startDate: NOW + 10, expiringDate: NOW + 20 }));
        await p.store.create(msg({ title: "expired", startDate: NOW - 20, expiringDate: NOW }));
        const q = { featureId: "f", sortBy: "StartDate" as const, sortOrder: "Asc" as const, limit: 10, now: NOW };
        const titles = async (over: object) => (await p.store.list({ ...q, expiry: "NonExpired", ...over })).map((r) => r.title);
        expect(await titles({})).toEqual(["active", "tie", "global"]);
        expect(await titles({ sortOrder: "Desc" })).toEqual(["global", "tie", "active"]);
        expect(await titles({ expiry: "Pending" })).toEqual(["pending"]);
        expect(await titles({ expiry: "Expired" })).toEqual(["expired"]);
        expect(await titles({ expiry: "All", sortBy: "ExpiringDate" })).toEqual(["expired", "pending", "active", "tie", "global"]);
        expect(await titles({ featureId: null })).toEqual(["global"]);
        expect(await titles({ after: { key: active.startDate, id: active.id } })).toEqual(["tie", "global"]);
        expect(await titles({ limit: 1, after: { key: tie.startDate, id: tie.id } })).toEqual(["global"]);
        expect(await p.store.nextChangeAfter(NOW)).toBe(pending.startDate);
        expect(await p.store.nextChangeAfter(NOW + 10)).toBe(pending.expiringDate);
        expect(await p.store.nextChangeAfter(NOW + 1000)).toBe(Infinity);
      } finally {
        await p.close();
      }
    });

    it("D22 purge deletes what expired before the cutoff, global ones too, and counts them", async () => {
      const p = await open();
      try {
        await p.store.create(msg({ expiringDate: NOW - 10 }));
        await p.store.create(msg({ featureId: null, expiringDate: NOW - 5 }));
        const kept = await p.store.create(msg({ expiringDate: NOW }));
        expect(await p.store.purgeExpiredBefore(NOW)).toBe(2);
        expect(
          (await p.store.list({ featureId: "f", expiry: "All", sortBy: "StartDate", sortOrder: "Asc", limit: 10, now: NOW })).map(
            (r) => r.id,
          ),
        ).toEqual([kept.id]);
      } finally {
        await p.close();
      }
    });

    it("D40 the change mark moves at this store's own write at once, and at another process's write", async () => {
      const p = await open();
      try {
        const m0 = p.store.changeMark();
        const row = await p.store.create(msg());
        const m1 = p.store.changeMark();
        expect(m1).not.toBe(m0);
        await p.other.update(row, { ...row, title: "changed elsewhere" });
        expect(await until(() => p.store.changeMark() !== m1)).toBe(true);
      } finally {
        await p.close();
      }
    });
  });
});
