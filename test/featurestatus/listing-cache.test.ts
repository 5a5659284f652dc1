// Cached listings (bench target of issue 3) never show a stale page: every
// write, by this server or by another connection, and every start or expiry
// that moves a message between the D19 windows, is seen by the next listing.
import { describe, expect, it } from "vitest";
import { ListingCache } from "../../src/featurestatus/listings/listing-cache.js";
import { queryElsewhere } from "../helpers/server.js";
import { draft, iso, useMessageServer, type ApiMessage } from "../helpers/messages.js";

const t = useMessageServer();
const titles = async (feature: string, query = "") => ((await t.a.list(feature, query)).json.data as ApiMessage[]).map((m) => m.title);

describe("D19 listings served from the cache stay current", () => {
  it("D19 create, update and delete through the API show in the next listing", async () => {
    expect(await titles("cache-a")).toEqual([]);
    const m = (await t.a.create("cache-a", draft({ title: "first" }))).json as ApiMessage;
    expect(await titles("cache-a")).toEqual(["first"]);
    await t.a.update("cache-a", m.id, { title: "second" });
    expect(await titles("cache-a")).toEqual(["second"]);
    await t.a.remove("cache-a", m.id);
    expect(await titles("cache-a")).toEqual([]);
  });

  it("D19 a write by another connection to the same database shows in the next listing", async () => {
    expect(await titles("cache-b")).toEqual([]);
    const now = Math.floor(Date.now() / 1000);
    await queryElsewhere(
      t.server,
      "INSERT INTO messages (feature_id, type, title, body, start_date, expiring_date) VALUES ('cache-b', 'Warning', 'from elsewhere', '', $1, $2)",
      now - 60,
      now + 3600,
    );
    expect(await titles("cache-b")).toEqual(["from elsewhere"]);
  });

  it("D19 the last active message leaves the cached listing at its expiry when no message starts later", async () => {
    await t.a.create("cache-d", draft({ title: "last one", startDate: iso(-3600), expiringDate: iso(2) }));
    expect(await titles("cache-d")).toEqual(["last one"]);
    await new Promise((r) => setTimeout(r, 2100));
    expect(await titles("cache-d")).toEqual([]);
  });

  it("D19 a message enters the active window at its start and leaves it at its expiry, on the real clock", async () => {
    await t.a.create("cache-c", draft({ title: "starting", startDate: iso(2), expiringDate: iso(3600) }));
    await t.a.create("cache-c", draft({ title: "ending", startDate: iso(-3600), expiringDate: iso(2) }));
    expect(await titles("cache-c")).toEqual(["ending"]);
    expect(await titles("cache-c", "expiry=Pending")).toEqual(["starting"]);
    await new Promise((r) => setTimeout(r, 3100));
    expect(await titles("cache-c")).toEqual(["starting"]);
    expect(await titles("cache-c", "expiry=Expired")).toEqual(["ending"]);
  });
});

describe("ListingCache", () => {
  const source = (mark: { v: string | undefined }, next: number) => ({ changeMark: () => mark.v, nextChangeAfter: async () => next });

  it("D40 while changes cannot be told (the change feed is down) every get reads through and nothing is kept, not even after", async () => {
    const mark: { v: string | undefined } = { v: "a" };
    const cache = new ListingCache<number>(source(mark, Infinity), 1000, () => 8);
    let computed = 0;
    const get = () => cache.get("k", 0, async () => ++computed);
    expect([await get(), await get()]).toEqual([1, 1]);
    mark.v = undefined;
    expect([await get(), await get()]).toEqual([2, 3]);
    // Read while the feed came back: kept under no mark, so not served once it is back.
    expect(await cache.get("k", 0, async () => ((mark.v = "b"), ++computed))).toBe(4);
    expect([await get(), await get()]).toEqual([5, 5]);
  });

  it("computes once while nothing changes, again after a change mark, a boundary or a clock set back", async () => {
    const mark = { v: "a" };
    const cache = new ListingCache<number>(source(mark, 100), 1000, () => 8);
    let computed = 0;
    const get = (now: number) => cache.get("k", now, async () => ++computed);
    expect([await get(50), await get(60), await get(99)]).toEqual([1, 1, 1]);
    expect(await get(100)).toBe(2); // the boundary: some message starts or expires
    mark.v = "b";
    expect(await get(100)).toBe(3);
    expect(await get(40)).toBe(4); // the clock went back
  });

  it("does not cache errors", async () => {
    const cache = new ListingCache<number>(source({ v: "a" }, Infinity), 1000, () => 8);
    await expect(
      cache.get("bad", 0, async () => {
        throw new Error("no");
      }),
    ).rejects.toThrow("no");
    expect(await cache.get("bad", 0, async () => 7)).toBe(7);
    expect(await cache.get("bad", 0, async () => 8)).toBe(7);
  });

  it("D19 a page computed while the data changed is served but not kept", async () => {
    const mark = { v: "a" };
    const cache = new ListingCache<string>(source(mark, Infinity), 1000, () => 8);
    expect(await cache.get("k", 0, async () => "before")).toBe("before");
    mark.v = "b";
    // The write lands while the next page is read: that page may predate it.
    expect(await cache.get("k", 0, async () => ((mark.v = "c"), "during"))).toBe("during");
    expect(await cache.get("k", 0, async () => "after")).toBe("after");
    expect(await cache.get("k", 0, async () => "again")).toBe("after");
  });

  it("D51 stays within its byte bound, the least recently used going first; a value over the bound is never kept", async () => {
    // Each entry: 2 bytes per key character (2) + the value as its own size.
    const cache = new ListingCache<number>(source({ v: "a" }, Infinity), 100, (n) => n);
    await cache.get("a", 0, async () => 40); // 42 bytes
    await cache.get("b", 0, async () => 40); // 84
    expect(await cache.get("a", 0, async () => -1)).toBe(40); // a is now the most recently used
    await cache.get("c", 0, async () => 10); // 96
    expect(cache.size).toBe(96);
    await cache.get("d", 0, async () => 10); // 108 > 100: b, the least recently used, goes
    expect(cache.size).toBe(66);
    expect(await cache.get("b", 0, async () => 41)).toBe(41); // recomputed: 43 more, and a goes
    expect(cache.size).toBe(67);
    expect(await cache.get("c", 0, async () => -1)).toBe(10);
    expect(await cache.get("big", 0, async () => 200)).toBe(200);
    expect(await cache.get("big", 0, async () => 201)).toBe(201); // over the bound alone: computed each time
    expect(cache.size).toBe(67);
  });
});
