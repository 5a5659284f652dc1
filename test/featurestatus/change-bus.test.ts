// Issue 40 item 4: a write tells its watchers after it commits, on a later
// turn of the event loop, never on its own call stack: a watcher that throws
// cannot fail the write, and the write's answer does not wait for watchers.
import { describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ChangeBus } from "../../src/featurestatus/live/change-bus.js";
import { MessageWrites } from "../../src/featurestatus/messages/message-writes.js";
import { SqliteMessageStore } from "../../src/sqlite/message-store.js";
import { openDatabase } from "../../src/sqlite/database.js";
import { draft, useMessageServer } from "../helpers/messages.js";
import { nextEvent, openSse } from "../helpers/sse.js";

const NOW = Math.floor(Date.now() / 1000);
const message = {
  featureId: "bus",
  type: "Warning",
  title: "t",
  body: "",
  startDate: NOW - 60,
  expiringDate: NOW + 3600,
  dismissible: true,
};
const turn = () => new Promise((r) => setImmediate(r));

describe("issue 40 item 4: the change bus", () => {
  it("tells watchers after the commit, off the write's call stack, once for writes committed together (D66); one that throws skips no other", async () => {
    const dir = mkdtempSync(join(tmpdir(), "meridian-bus-"));
    const db = openDatabase(join(dir, "bus.db"));
    try {
      const errors: unknown[] = [];
      const bus = new ChangeBus((e) => errors.push(e));
      const writes = new MessageWrites(new SqliteMessageStore(db), bus);
      const stacks: string[] = [];
      bus.watch(() => {
        throw new Error("a broken watcher");
      });
      bus.watch(() => void stacks.push(new Error().stack ?? ""));
      // Two writes at once share a commit (the group commit, D66): the watchers are told once, after it.
      const pending = Promise.all([writes.create(message), writes.create({ ...message, title: "second" })]);
      expect(stacks).toHaveLength(0); // nothing committed yet: nobody told
      const [row] = await pending;
      await turn();
      expect(stacks).toHaveLength(1);
      expect(stacks[0]).not.toMatch(/MessageWrites|message-writes/);
      expect(errors).toEqual([new Error("a broken watcher")]);
      expect(await writes.delete(row.id, undefined)).toBe(true);
      await turn();
      expect(stacks).toHaveLength(2);
      expect(await writes.delete(row.id, undefined)).toBe(false); // nothing changed: nothing told
      await turn();
      expect(stacks).toHaveLength(2);
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe("in the server", () => {
    const t = useMessageServer();

    it("a watcher that throws does not fail a POST; SSE watchers are still pushed the change", async () => {
      let told = 0;
      const off = t.server.app.messageChanges.watch(() => {
        told++;
        throw new Error("a broken watcher");
      });
      const s = await openSse(`${t.server.url}/api/admin/feature/bus/message/stream`, { "svc-open-api-key": t.key });
      try {
        expect((await nextEvent(s)).messages).toEqual([]);
        const r = await t.a.create("bus", draft({ title: "told" }));
        expect(r.status).toBe(201);
        expect((await nextEvent(s)).messages.map((m) => m.title)).toEqual(["told"]);
        expect(told).toBeGreaterThanOrEqual(1);
        expect(t.server.logs.some((l) => l.msg === "a watcher of message changes failed")).toBe(true);
        expect((await t.a.update("bus", r.json.id, { title: "again" })).status).toBe(200);
      } finally {
        off();
        s.close();
      }
    });
  });
});
