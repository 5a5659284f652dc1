// D51: every cache is bounded in bytes. A reader who asks thousands of
// distinct listings (limit, sortBy, sortOrder, expiry, feature) of long
// messages must not grow the server's memory past the listing cache's bound:
// measured as the resident set of a real `meridian serve` process. What the
// cache evicts is garbage in V8's old generation until a full collection,
// which the cache asks for once its evictions add up to its bound
// (runtime/garbage.ts): 4,096 listings of 512 features at 32 MB grew RSS by
// 189 MB before, 64 MB since.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/sqlite/database.js";
import { SqliteMessageStore } from "../../src/sqlite/message-store.js";
import { MessageWrites } from "../../src/featurestatus/messages/message-writes.js";
import { ChangeBus } from "../../src/featurestatus/live/change-bus.js";
import { exited, meridian, serve } from "../helpers/cli.js";

const MB = 1024 * 1024;
const CACHE_MB = 16;
// Measured (2,000 listings of up to 250 messages, about 1 MB of JSON each):
// with no cache at all RSS grows +77 MB on Node 20 and +174..230 MB on Node
// 26 (the young generation and the 64 MB old-generation floor of
// SERVE_NODE_FLAGS filling with garbage); a 16 MB cache adds about 60 MB to
// that; the old entry-bounded cache grew +2,180 MB. V8 frees evicted pages
// (and the JSON text the transcoder keeps for them) only at its next full
// collection, so the cache costs a few times its setting: the test allows 4
// times the setting plus 80 MB of noise above a run with no cache, measured
// in the same test.
const ALLOWED_OVER_NO_CACHE_MB = 4 * CACHE_MB + 80;
// A server past this has no bound: stop before it takes the machine's memory.
const RUNAWAY_MB = 1000;

const dir = mkdtempSync(join(tmpdir(), "meridian-listing-memory-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function rssOf(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(kb![1]) * 1024;
}

/** GETs `path` and throws the answer away; resolves with its status. */
function getDiscarding(url: string, key: string): Promise<number> {
  return new Promise((resolve, reject) => {
    request(url, { headers: { "svc-open-api-key": key } }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode!));
    })
      .on("error", reject)
      .end();
  });
}

/** 2,000 distinct global listings: every limit to 250 in each order and window. */
function* byLimit(): Generator<string> {
  for (const expiry of ["All", "NonExpired"]) {
    for (const sortBy of ["StartDate", "ExpiringDate"]) {
      for (const sortOrder of ["Asc", "Desc"]) {
        for (let limit = 1; limit <= 250; limit++)
          yield `/api/admin/feature/message?limit=${limit}&sortBy=${sortBy}&sortOrder=${sortOrder}&expiry=${expiry}`;
      }
    }
  }
}

/** 4,096 distinct listings of 512 features (each with the 1,000 global messages, 100 a page) in each order and window. */
function* byFeature(): Generator<string> {
  for (let f = 0; f < 512; f++) {
    for (const expiry of ["All", "NonExpired"]) {
      for (const sortBy of ["StartDate", "ExpiringDate"]) {
        for (const sortOrder of ["Asc", "Desc"])
          yield `/api/admin/feature/feature-${f}/message?sortBy=${sortBy}&sortOrder=${sortOrder}&expiry=${expiry}`;
      }
    }
  }
}

/** RSS growth (MB) of a server with this cache bound over the listings of `paths`, of the 1,000 messages in `db`. */
async function growthOverListings(db: string, key: string, cacheMb: number, paths: () => Iterable<string>): Promise<number> {
  const { child, url } = await serve({ MERIDIAN_DB: db, MERIDIAN_LISTING_CACHE_MB: String(cacheMb) }, [], true);
  try {
    expect(await getDiscarding(`${url}/api/admin/feature/message?limit=1000`, key)).toBe(200);
    const base = rssOf(child.pid!);
    let peak = base;
    let asked = 0;
    let expected = 0;
    for (const path of paths()) {
      expected++;
      if (peak - base > RUNAWAY_MB * MB) continue;
      expect(await getDiscarding(url + path, key)).toBe(200);
      if (++asked % 50 === 0) peak = Math.max(peak, rssOf(child.pid!));
    }
    peak = Math.max(peak, rssOf(child.pid!));
    console.info(
      `cache ${cacheMb} MB: listings asked ${asked}; RSS before ${(base / MB).toFixed(0)} MB, peak ${(peak / MB).toFixed(0)} MB, growth ${((peak - base) / MB).toFixed(0)} MB`,
    );
    expect(asked).toBe(expected);
    return (peak - base) / MB;
  } finally {
    child.kill("SIGTERM");
    await exited(child);
  }
}

/**
 * The growth with the cache minus the growth without it. One run's peak
 * depends on when V8 collects (seen once in CI: +392 MB with the cache
 * against +203 without, where runs give +220-232 against +178-189): a run
 * over the allowance is measured again, both configurations, and the lower
 * of each counts. An unbounded cache (+2,180 MB) is over it in both.
 */
async function overNoCache(db: string, key: string, cacheMb: number, allowedMb: number, paths: () => Iterable<string>): Promise<number> {
  let without = await growthOverListings(db, key, 0, paths);
  let withCache = await growthOverListings(db, key, cacheMb, paths);
  if (withCache - without >= allowedMb) {
    without = Math.min(without, await growthOverListings(db, key, 0, paths));
    withCache = Math.min(withCache, await growthOverListings(db, key, cacheMb, paths));
  }
  return withCache - without;
}

/** A database of 1,000 long global messages and a read-only BackOffice key, made once for the file. */
const fixture = (() => {
  let made: { db: string; key: string } | undefined;
  return (): { db: string; key: string } => {
    if (made) return made;
    const db = join(dir, "m.db");
    expect(meridian(["init"], { MERIDIAN_DB: db }).status).toBe(0);
    const key = meridian(
      ["apikey", "create", "--client-id", "reader", "--scope", "platform_iam_featurestatus_read", "--role", "BackOffice"],
      { MERIDIAN_DB: db },
    ).stdout.trim();
    const conn = openDatabase(db);
    try {
      const writes = new MessageWrites(new SqliteMessageStore(conn), new ChangeBus());
      const now = Math.floor(Date.now() / 1000);
      conn.transaction(() => {
        for (let i = 0; i < 1000; i++) {
          void writes.create({
            featureId: null,
            type: "Warning",
            dismissible: true,
            title: `t${i} `.padEnd(255, "x"),
            body: `<p>${i}</p>`.padEnd(4000, "y"),
            startDate: now - 3600 - i,
            expiringDate: now + 86_400 + i,
          });
        }
      })();
    } finally {
      conn.close();
    }
    return (made = { db, key });
  };
})();

describe("D51 the listing cache is bounded in bytes", () => {
  it(
    "D51 thousands of distinct listings of 1,000 long messages keep the server's RSS growth within a few times the cache bound",
    { timeout: 360_000 },
    async () => {
      const { db, key } = fixture();
      expect(await overNoCache(db, key, CACHE_MB, ALLOWED_OVER_NO_CACHE_MB, byLimit)).toBeLessThan(ALLOWED_OVER_NO_CACHE_MB);
    },
  );

  it(
    "D51 4,096 distinct listings by a read-only key at the default 32 MB bound: RSS growth under 150 MB over no cache",
    { timeout: 600_000 },
    async () => {
      const { db, key } = fixture();
      expect(await overNoCache(db, key, 32, 150, byFeature)).toBeLessThan(150);
    },
  );
});
