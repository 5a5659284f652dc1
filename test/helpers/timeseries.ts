// REST helpers for the time series routes: D14 headers and a key that may write.
import { MAX_TIMESTAMP, MIN_TIMESTAMP, decodeBlock } from "../../src/timeseries/blocks/block-codec.js";
import { blocksOf } from "../../src/timeseries/blocks/block-store.js";
import type { Backend } from "../../src/app/backend.js";
import { checkAnswer } from "./openapi.js";
import type { TestServer } from "./server.js";

export const PROJECT = "proj-a";
export const TS_RW = { scopes: ["platform_timeseries_readwrite"], projects: [PROJECT] };

/** The D14 headers of a time series call (gRPC metadata too); the dataset one when given. */
export function tsHeaders(key: string, dataset?: string, project = PROJECT): Record<string, string> {
  return {
    "svc-open-api-key": key,
    "svc-service-id": "timeseries",
    "svc-project-id": project,
    ...(dataset ? { "svc-dataset-id": dataset } : {}),
  };
}

export function tsApi(server: TestServer, key: string, project = PROJECT) {
  const send = (method: string, path: string, body?: unknown, extra: Record<string, string> = {}) => {
    const dataset = /^\/api\/ts\/dataset\/([^/?]+)/.exec(path)?.[1];
    const headers = { ...tsHeaders(key, dataset, project), "content-type": "application/json", ...extra };
    return fetch(server.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  };
  const call = async (method: string, path: string, body?: unknown, extra: Record<string, string> = {}) => {
    const r = await send(method, path, body, extra);
    const text = await r.text();
    await checkAnswer(server.url, method, path, r.status, r.headers.get("content-type"), text); // D41
    return { status: r.status, json: text ? JSON.parse(text) : undefined };
  };
  return {
    call,
    /** Uploads rows ([timestamp, cells...]) in bodies of at most 50,000 rows. */
    async upload(dataset: string, series: string, rows: unknown[][]): Promise<void> {
      for (let i = 0; i < rows.length; i += 50_000) {
        const r = await call("POST", `/api/ts/dataset/${dataset}/timeseries/${series}/values`, { data: rows.slice(i, i + 50_000) });
        if (r.status !== 200) throw new Error(`upload: ${r.status} ${JSON.stringify(r.json)}`);
      }
    },
    /** GET .../values with a query string; api-version 3 when paged. */
    read(dataset: string, series: string, query = "", paged = false) {
      return call(
        "GET",
        `/api/ts/dataset/${dataset}/timeseries/${series}/values${query ? "?" + query : ""}`,
        undefined,
        paged ? { "api-version": "3" } : {},
      );
    },
    /** The body of GET .../values as the server wrote it. */
    async readText(dataset: string, series: string): Promise<string> {
      return (await send("GET", `/api/ts/dataset/${dataset}/timeseries/${series}/values`)).text();
    },
    /** POST .../timeseries/values with the id list; api-version 3 when paged. */
    readMany(dataset: string, ids: unknown, query = "", paged = false) {
      return call(
        "POST",
        `/api/ts/dataset/${dataset}/timeseries/values${query ? "?" + query : ""}`,
        ids,
        paged ? { "api-version": "3" } : {},
      );
    },
    async dataset(body: Record<string, unknown> = {}): Promise<string> {
      const r = await call("POST", "/api/ts/dataset", { timeSeriesProperties: [{ name: "depth", dataType: "Double" }], ...body });
      if (r.status !== 201) throw new Error(`dataset: ${r.status} ${JSON.stringify(r.json)}`);
      return r.json.id;
    },
    async series(dataset: string, body: Record<string, unknown> = {}): Promise<string> {
      const r = await call("POST", `/api/ts/dataset/${dataset}/timeseries`, {
        item: { name: "Water level", unit: "m", item: "level", dataType: "Single", timeSeriesType: "Instantaneous" },
        properties: { depth: 2.5 },
        dataFields: [
          { name: "value", dataType: "Single" },
          { name: "flag", dataType: "Flag", flags: [{ id: 1, name: "suspect", level: 2 }] },
        ],
        ...body,
      });
      if (r.status !== 201) throw new Error(`series: ${r.status} ${JSON.stringify(r.json)}`);
      return r.json.id;
    },
  };
}

/** A series' stored rows, read straight from its blocks: [epoch seconds, cell or null...]. */
export async function storedRows(server: TestServer, seriesId: string): Promise<(number | null)[][]> {
  return rowsOfPayloads(
    await server.query<{ payload: Buffer }>(
      "SELECT payload FROM blocks JOIN time_series USING (sid) WHERE time_series.id = $1 ORDER BY first_ts",
      seriesId,
    ),
  );
}

/** The same through a backend's stores (a database without a server). */
export async function storedRowsIn(backend: Backend, datasetId: string, seriesId: string): Promise<(number | null)[][]> {
  const s = await backend.metadata.getSeries(datasetId, seriesId);
  if (!s) throw new Error(`no series ${seriesId}`);
  const blocks = [];
  // A copy of each payload: the walk frees it once the next block is asked for (D28).
  for await (const b of blocksOf(backend.blocks, s.sid, MIN_TIMESTAMP, MAX_TIMESTAMP)) blocks.push({ payload: Buffer.from(b.payload) });
  return rowsOfPayloads(blocks);
}

function rowsOfPayloads(blocks: { payload: Buffer }[]): (number | null)[][] {
  const out: (number | null)[][] = [];
  for (const b of blocks) {
    const d = decodeBlock(b.payload);
    d.timestamps.forEach((t, i) => out.push([t, ...d.columns.map((c) => (c.missing?.[i] ? null : c.values[i]))]));
  }
  return out;
}

/** Row timestamps: `yyyy-MM-ddTHH:mm:ss` of epoch seconds. */
export function iso(t: number): string {
  return new Date(t * 1000).toISOString().slice(0, 19);
}

/** n rows every `step` seconds from `start`: [timestamp, value with 3 decimals, flag]. */
export function makeRows(n: number, start = Date.UTC(2024, 0, 1) / 1000, step = 60): [string, number, number][] {
  return Array.from({ length: n }, (_, i) => [
    iso(start + i * step),
    Math.round((10 + Math.sin(i / 50) * 3) * 1000) / 1000,
    i % 97 === 0 ? 1 : 0,
  ]);
}
