// Value reads for gRPC callers: the columnar ValuesChunk (its wire form
// written natively equals protobuf-es's own encoding), and a representative
// set of the read rules through an independent @grpc/grpc-js client.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import * as grpc from "@grpc/grpc-js";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { TimeSeriesService, ValuesChunkSchema, type ValuesChunk } from "../../src/gen/meridian/timeseries/v1/time_series_pb.js";
import { FieldKind, MAX_TIMESTAMP, MIN_TIMESTAMP, encodeBlock } from "../../src/timeseries/blocks/block-codec.js";
import { columnRows, wireColumnRows } from "../../src/timeseries/value-columns.js";
import { blockArb, toBlock, valueArb } from "../helpers/blocks.js";
import { grpcStream, hostPort } from "../helpers/clients.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { TS_RW, iso, makeRows, tsApi, tsHeaders } from "../helpers/timeseries.js";

describe("ValuesChunk columns", () => {
  /** The chunk the natively written parts make, and the one protobuf-es writes for the same rows, decoded. */
  function bothWays(payload: Uint8Array, from: number, to: number, maxRows: number) {
    const plain = columnRows(payload, from, to, maxRows, true);
    const wire = wireColumnRows(payload, from, to, maxRows, true);
    expect([wire.rows, wire.last, wire.more]).toEqual([plain.rows, plain.last, plain.more]);
    return [wire, plain].map((r) => fromBinary(ValuesChunkSchema, toBinary(ValuesChunkSchema, r.out)));
  }
  // Flags all in 0..127 (most real flags) take a one-byte path; any int32 the general one. Bounds just past 127 catch a wrong limit.
  const flagsUpTo = (max: number) => (kind: FieldKind) => (kind === FieldKind.Flag ? fc.integer({ min: 0, max }) : valueArb(kind));

  it("the natively written wire form decodes to the same chunk as protobuf-es's encoding of the same rows, for any block and range", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(undefined, 127, 128, 255).chain((max) => blockArb(300, max === undefined ? valueArb : flagsUpTo(max))),
        fc.integer({ min: 0, max: 299 }),
        fc.integer({ min: 0, max: 299 }),
        fc.integer({ min: 0, max: 400 }),
        (b, i, j, maxRows) => {
          const block = toBlock(b);
          const ts = block.timestamps;
          const from = ts[Math.min(i, ts.length - 1)] - (i % 2);
          const to = ts[Math.min(j, ts.length - 1)] + (j % 3);
          const [wire, plain] = bothWays(encodeBlock(block), from, to, maxRows);
          expect(wire).toEqual(plain);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("timestamps on both sides of every varint size boundary (negative, then 1 to 6 bytes) are written alike, for any sub-range", () => {
    const edges = [
      -2,
      -1,
      0,
      1,
      127,
      128,
      2 ** 14 - 1,
      2 ** 14,
      2 ** 21 - 1,
      2 ** 21,
      2 ** 28 - 1,
      2 ** 28,
      2 ** 35 - 1,
      2 ** 35,
      MAX_TIMESTAMP,
    ];
    const timestamps = [MIN_TIMESTAMP, ...edges];
    const payload = encodeBlock(
      toBlock({ timestamps, columns: [{ kind: FieldKind.Flag, values: timestamps.map((_, i) => i), missing: null }] }),
    );
    for (let i = 0; i < timestamps.length; i++) {
      for (let j = i; j < timestamps.length; j++) {
        const [wire, plain] = bothWays(payload, timestamps[i], timestamps[j], 1000);
        expect(wire.timestamps).toEqual(timestamps.slice(i, j + 1).map(BigInt));
        expect(wire).toEqual(plain);
      }
    }
  });
});

describe("value reads through grpc-js", () => {
  let server: TestServer;
  let key: string;
  let d: string;
  let a: string, empty: string;
  const rows = makeRows(40_000);
  const md = (extra: Record<string, string> = {}) => ({ ...tsHeaders(key, d), ...extra });
  const asRows = (chunks: ValuesChunk[]) =>
    chunks.flatMap((c) => c.timestamps.map((t, i) => [iso(Number(t)), c.columns[0].singles[i], c.columns[1].flags[i]]));
  const expected = rows.map(([t, v, f]) => [t, Math.fround(v), f]);

  beforeAll(async () => {
    server = await startTestServer();
    key = await server.key(TS_RW);
    const api = tsApi(server, key);
    d = await api.dataset();
    a = await api.series(d);
    empty = await api.series(d);
    await api.upload(d, a, rows);
  }, 30_000);
  afterAll(() => server.close());

  const read = (req: Record<string, unknown>, extra?: Record<string, string>) =>
    grpcStream(hostPort(server.url), TimeSeriesService.method.readValues, { datasetId: d, timeSeriesId: a, ...req }, md(extra));
  const readMany = (req: Record<string, unknown>, extra?: Record<string, string>) =>
    grpcStream(hostPort(server.url), TimeSeriesService.method.readManyValues, { datasetId: d, ...req }, md(extra));

  it("whole range: one chunk per block, in time order, with the series id; from and to inclusive (D24)", async () => {
    const all = await read({});
    expect(all.error).toBeUndefined();
    expect(all.messages.length).toBe(3);
    expect(all.messages.every((c) => c.timeSeriesId === a && c.cursor === undefined)).toBe(true);
    expect(asRows(all.messages)).toEqual(expected);
    const some = await read({ from: rows[10][0], to: rows[20][0].replace(/[-:]/g, "").replace(/^(\d{4})(\d\d)(\d\d)/, "$1-$2-$3") });
    expect(asRows(some.messages)).toEqual(expected.slice(10, 21));
  });

  it("api-version 3: a page's last chunk carries only the cursor; following it reads the rest; the last page has none", async () => {
    const first = await read({ limit: 16_536n }, { "api-version": "3" });
    const last = first.messages[first.messages.length - 1];
    expect(last.cursor).toContain("#");
    expect(last.timestamps.length).toBe(0);
    const rest = await read({ cursor: last.cursor, limit: 5_000_000n }, { "api-version": "3" });
    expect(rest.messages.some((c) => c.cursor !== undefined)).toBe(false);
    expect([...asRows(first.messages), ...asRows(rest.messages)]).toEqual(expected);
  });

  it("spec error table over gRPC: from with a cursor, a tampered cursor, a cursor of the other endpoint are INVALID_ARGUMENT", async () => {
    const first = await read({ limit: 16_536n }, { "api-version": "3" });
    const cursor = first.messages[first.messages.length - 1].cursor!;
    expect((await read({ cursor, from: rows[0][0] }, { "api-version": "3" })).error?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect((await read({ cursor: "x" + cursor }, { "api-version": "3" })).error?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect((await readMany({ timeSeriesIds: [a], cursor }, { "api-version": "3" })).error?.code).toBe(grpc.status.INVALID_ARGUMENT);
  });

  it("D9 without api-version 3 limit and cursor are ignored and the whole range is returned (gRPC)", async () => {
    const first = await read({ limit: 16_536n }, { "api-version": "3" });
    const cursor = first.messages[first.messages.length - 1].cursor!;
    for (const req of [{ limit: 20_000n }, { cursor }, { cursor, from: rows[0][0], limit: 16_536n }]) {
      const r = await read(req);
      expect(r.error).toBeUndefined();
      expect(r.messages.some((c) => c.cursor !== undefined)).toBe(false);
      expect(asRows(r.messages)).toEqual(expected);
    }
    const many = await readMany({ timeSeriesIds: [a], cursor: "abc#def", limit: 16_536n });
    expect(many.error).toBeUndefined();
    expect(asRows(many.messages)).toEqual(expected);
  });

  it("D26 ReadManyValues: series in request order, an empty one as an empty chunk; an unknown id is NOT_FOUND", async () => {
    const r = await readMany({ timeSeriesIds: [empty, a], to: rows[4][0] });
    expect(r.error).toBeUndefined();
    expect(r.messages.map((c) => [c.timeSeriesId, c.timestamps.length])).toEqual([
      [empty, 0],
      [a, 5],
    ]);
    const unknown = await readMany({ timeSeriesIds: [a, "00000000-0000-0000-0000-0000000000ff"] });
    expect(unknown.error?.code).toBe(grpc.status.NOT_FOUND);
    expect(unknown.error?.details).toContain("00000000-0000-0000-0000-0000000000ff");
  });
});
