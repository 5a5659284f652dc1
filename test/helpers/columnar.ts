// What the format tests of the values and chart reads share (D50, D64): a
// series of all three field kinds, random rows stored straight through the
// block store (NaN cannot come through an upload, D25, but may be in a
// block), answers fetched as bytes, and JSON rows as the formats store them.
import fc from "fast-check";
import { request } from "node:http";
import { expect } from "vitest";
import { FieldKind, valuesArray } from "../../src/timeseries/blocks/block-codec.js";
import type { TestServer } from "./server.js";
import { iso, tsHeaders, type tsApi } from "./timeseries.js";

export type Cell = number | null;
export type Row = [string, ...Cell[]];

/** The fields of a series with one field of each kind, and their kinds in order. */
export const THREE_FIELDS = [
  { name: "a", dataType: "Single" },
  { name: "b", dataType: "Double" },
  { name: "f", dataType: "Flag" },
];
export const THREE_KINDS = [FieldKind.Single, FieldKind.Double, FieldKind.Flag];

/** A new series of THREE_FIELDS: its id and its sid in the block store. */
export async function threeFieldSeries(server: TestServer, api: ReturnType<typeof tsApi>, dataset: string) {
  const id = await api.series(dataset, { dataFields: THREE_FIELDS });
  const sid = (await server.app.backend.metadata.getSeries(dataset, id))!.sid;
  return { id, sid };
}

/** Random rows for THREE_FIELDS: up to `maxRows`, gaps of 1 to 100 s from a start anywhere in D24, cells of `cell` (flags any int32). */
export function randomRowsArb(maxRows: number, cell: fc.Arbitrary<Cell>) {
  return fc.integer({ min: 0, max: maxRows }).chain((n) =>
    fc.record({
      start: fc.integer({ min: -62_135_596_800, max: 253_402_300_799 - maxRows * 100 }),
      gaps: fc.array(fc.integer({ min: 1, max: 100 }), { minLength: n, maxLength: n }),
      cells: fc.array(fc.tuple(cell, cell, fc.oneof(fc.constant(null), fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }))), {
        minLength: n,
        maxLength: n,
      }),
    }),
  );
}

/** The rows' timestamps: each gap after the one before, the first gap after the start. */
export function timestampsOf(s: { start: number; gaps: number[] }): Float64Array {
  const timestamps = new Float64Array(s.gaps.length);
  let t = s.start;
  s.gaps.forEach((g, k) => (timestamps[k] = t += g));
  return timestamps;
}

/** A range by i and j: the whole series, one between two of its rows, or one before them all (empty). */
export function rangeQuery(start: number, timestamps: Float64Array, i: number, j: number): string {
  const n = timestamps.length;
  const pick = (k: number) => (n === 0 ? start : timestamps[k % n]);
  let [from, to] = [pick(i), pick(j)];
  if (from > to) [from, to] = [to, from];
  return (i + j) % 3 === 0 ? "" : (i + j) % 3 === 1 ? `from=${iso(from)}&to=${iso(to)}` : `to=${iso(start)}`;
}

/** Replaces every row of the series by these (timestamps ascending; a null cell is missing). */
export async function storeRows(server: TestServer, sid: number, kinds: FieldKind[], timestamps: Float64Array, cells: Cell[][]) {
  const n = timestamps.length;
  const columns = kinds.map((kind, c) => {
    const values = valuesArray(kind, n);
    const missing = new Uint8Array(n);
    cells.forEach((row, k) => (row[c] === null ? (missing[k] = 1) : (values[k] = row[c])));
    return { kind, values, missing };
  });
  await server.app.backend.blocks.deleteRange(sid, kinds, -1e12, 1e12);
  if (n > 0) await server.app.backend.blocks.upsert(sid, kinds, { timestamps, columns });
}

/** JSON rows with Single cells as the float32 they denote (Arrow and Parquet hold the float itself). */
export function asStored(rows: Row[], kinds: FieldKind[]): Row[] {
  return rows.map(([t, ...cells]) => [t, ...cells.map((c, i) => (c !== null && kinds[i] === FieldKind.Single ? Math.fround(c) : c))]);
}

/** Reads of a server's answers as bytes, with a time series key's headers for a dataset (read when called: set in beforeAll). */
export function answerFetcher(ctx: () => { server: TestServer; key: string; dataset: string }) {
  const fetchBytes = async (method: string, path: string, headers: Record<string, string> = {}, body?: unknown) => {
    const { server, key, dataset } = ctx();
    const r = await fetch(server.url + path, {
      method,
      headers: { ...tsHeaders(key, dataset), "content-type": "application/json", ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.status, headers: r.headers, bytes: new Uint8Array(await r.arrayBuffer()) };
  };
  /** A 200 answer in `media` (Vary naming Accept), its bytes. */
  const formatBytes = async (media: string, method: string, path: string, headers: Record<string, string> = {}, body?: unknown) => {
    const r = await fetchBytes(method, path, { accept: media, ...headers }, body);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe(media);
    expect(r.headers.get("vary")).toMatch(/accept(?!-)/);
    return r.bytes;
  };
  const jsonOf = async (method: string, path: string, headers: Record<string, string> = {}, body?: unknown) => {
    const r = await fetchBytes(method, path, headers, body);
    expect(r.status).toBe(200);
    return JSON.parse(Buffer.from(r.bytes).toString());
  };
  /** A GET by node:http, its body as sent (fetch would undo a Content-Encoding). */
  const rawGet = (path: string, headers: Record<string, string>) => {
    const { server, key, dataset } = ctx();
    return new Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }>((resolve, reject) => {
      const req = request(server.url + path, { headers: { ...tsHeaders(key, dataset), ...headers } }, (res) => {
        const parts: Buffer[] = [];
        res.on("data", (c: Buffer) => parts.push(c));
        res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(parts) }));
      });
      req.on("error", reject);
      req.end();
    });
  };
  return { fetchBytes, formatBytes, jsonOf, rawGet };
}
