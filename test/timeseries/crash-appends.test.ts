// D66 D67 D68: a crash loses nothing acknowledged. A real `meridian serve`
// takes appends of one series and many-series writes from several writers
// (tails merging, blocks sealing, groups committing) and is killed with
// SIGKILL at a random moment; once it is served again, every acknowledged
// row is there with its value, every request is there whole or not at all,
// and no row is there that was never sent.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { openBackend } from "../../src/app/backend.js";
import { loadSettings } from "../../src/config/settings.js";
import { exited, serve, type Served } from "../helpers/cli.js";
import { TEST_BACKEND } from "../helpers/server.js";
import { freshPgDatabase } from "../helpers/postgres.js";
import { PROJECT, TS_RW, iso, tsHeaders } from "../helpers/timeseries.js";

const dir = mkdtempSync(join(tmpdir(), "meridian-crash-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const SERIES = 4;
const FIELDS = [
  { name: "value", dataType: "Double" },
  { name: "flag", dataType: "Flag" },
];

/** One request's rows: series index -> [second, value][]. */
type Sent = Map<number, [number, number][]>;

describe("D66 D67 a crash during appends", () => {
  it("D66 D67 D68 SIGKILL at a random moment of appends and many-series writes: every acknowledged row is stored, every request whole or not at all", async () => {
    const pg = TEST_BACKEND === "postgres" ? await freshPgDatabase() : undefined;
    const db = pg?.url ?? join(dir, "crash.db");
    const dataset = randomUUID();
    const series = Array.from({ length: SERIES }, () => randomUUID());
    const backend = await openBackend(loadSettings({ MERIDIAN_DB: db }), "file-and-folder");
    await backend.metadata.createDataset({ id: dataset, project: PROJECT, items: [], properties: [], metadata: {} });
    for (const id of series)
      await backend.metadata.createSeries({ id, datasetId: dataset, item: { name: id }, properties: {}, dataFields: FIELDS });
    const { key } = await backend.apiKeys.create({ clientId: "crash", roles: [], ...TS_RW });
    await backend.close();
    const headers = { ...tsHeaders(key, dataset), "content-type": "application/json" };
    const acked: Sent[] = [];
    const unknown: Sent[] = [];
    const next = new Array<number>(SERIES).fill(Date.UTC(2024, 0, 1) / 1000);
    let value = 0;
    try {
      for (let round = 0; round < 2; round++) {
        const server: Served = await serve({ MERIDIAN_DB: db });
        let alive = true;
        const writer = async (w: number) => {
          for (let i = 0; alive; i++) {
            const sent: Sent = new Map();
            // Appends of 1 to 40 rows to one series (the tail path), and now and then rows for every series (D68).
            const targets = i % 5 === w % 5 ? series.map((_, s) => s) : [(w + i) % SERIES];
            for (const s of targets) {
              const k = 1 + ((i * 7 + w) % 40);
              sent.set(
                s,
                Array.from({ length: k }, () => [(next[s] += 60), ++value]),
              );
            }
            const body =
              targets.length === 1
                ? { data: rows(sent.get(targets[0])!) }
                : { series: targets.map((s) => ({ timeSeriesId: series[s], data: rows(sent.get(s)!) })) };
            const path =
              targets.length === 1
                ? `/api/ts/dataset/${dataset}/timeseries/${series[targets[0]]}/values`
                : `/api/ts/dataset/${dataset}/values`;
            try {
              const r = await fetch(server.url + path, { method: "POST", headers, body: JSON.stringify(body) });
              await r.text();
              (r.status === 200 ? acked : unknown).push(sent);
            } catch {
              unknown.push(sent); // the server died with it in flight
            }
          }
        };
        const writers = Array.from({ length: 6 }, (_, w) => writer(w));
        await new Promise((r) => setTimeout(r, 1000 + Math.random() * 1500));
        server.child.kill("SIGKILL");
        alive = false;
        await exited(server.child);
        await Promise.all(writers);
      }
      expect(acked.length).toBeGreaterThan(5);

      const server = await serve({ MERIDIAN_DB: db });
      try {
        const stored = new Map<string, number>(); // "series:second" -> value
        for (const [s, id] of series.entries()) {
          const r = await fetch(`${server.url}/api/ts/dataset/${dataset}/timeseries/${id}/values`, { headers });
          expect(r.status).toBe(200);
          for (const [t, v] of (await r.json()).data as [string, number][]) stored.set(`${s}:${Date.parse(`${t}Z`) / 1000}`, v);
        }
        const has = (s: number, [t, v]: [number, number]) => stored.get(`${s}:${t}`) === v;
        for (const sent of acked)
          for (const [s, rs] of sent) for (const row of rs) expect(has(s, row), `acknowledged row ${s}:${row[0]}`).toBe(true);
        for (const sent of unknown) {
          const present = [...sent].flatMap(([s, rs]) => rs.map((row) => has(s, row)));
          expect(new Set(present).size, "a request is stored whole or not at all").toBe(1);
        }
        const sentCount = [...acked, ...unknown].reduce((n, sent) => n + [...sent.values()].reduce((m, rs) => m + rs.length, 0), 0);
        expect(stored.size).toBeLessThanOrEqual(sentCount);
        const sentKeys = new Set([...acked, ...unknown].flatMap((sent) => [...sent].flatMap(([s, rs]) => rs.map(([t]) => `${s}:${t}`))));
        for (const k of stored.keys()) expect(sentKeys.has(k), `row ${k} was never sent`).toBe(true);
      } finally {
        server.child.kill("SIGTERM");
        await exited(server.child);
      }
    } finally {
      await pg?.drop();
    }
  }, 90_000);
});

function rows(rs: [number, number][]): unknown[][] {
  return rs.map(([t, v]) => [iso(t), v, v % 3]);
}
