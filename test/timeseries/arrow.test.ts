// Arrow IPC stream answers (D64) through a real server: read with the Arrow
// project's own JS reader (apache-arrow) and compared cell by cell with the
// JSON read of the same request; the 406 of an Accept that allows no format;
// and what a client that stops reading costs (D28).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { connect } from "node:net";
import * as http2 from "node:http2";
import { zstdDecompressSync } from "node:zlib";
import { Message, RecordBatchReader, type RecordBatch, type Schema } from "apache-arrow";
import { FieldKind } from "../../src/timeseries/blocks/block-codec.js";
import { poolStats } from "../../src/native/buffer-pool.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { TS_RW, iso, makeRows, tsApi, tsHeaders } from "../helpers/timeseries.js";
import {
  answerFetcher,
  asStored,
  randomRowsArb,
  rangeQuery,
  storeRows,
  threeFieldSeries,
  timestampsOf,
  THREE_KINDS,
  type Row,
} from "../helpers/columnar.js";

const ARROW = "application/vnd.apache.arrow.stream";

interface Stream {
  schema: Schema;
  batches: RecordBatch[];
}

/**
 * Every stream of an answer, in order (a many-series read sends one per
 * series), each read on its own: apache-arrow's readAll does not stop a
 * stream at its end-of-stream marker when the stream has no batches. The
 * ends are found by walking the messages (continuation, metadata length,
 * metadata, body; a zero length ends the stream), as the format defines them.
 */
function streamsOf(bytes: Uint8Array): Stream[] {
  const out: Stream[] = [];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let start = 0;
  for (let at = 0; at < bytes.length;) {
    expect(view.getUint32(at, true)).toBe(0xffffffff);
    const length = view.getInt32(at + 4, true);
    if (length === 0) {
      at += 8;
      const reader = RecordBatchReader.from(bytes.subarray(start, at)).open();
      const schema = reader.schema; // read before the batches: the reader forgets it at the end
      // A stream without batches reads as one empty placeholder batch; only ours carry metadata (a cursor).
      const batches = [...reader].filter((b) => b.numRows > 0 || b.metadata.size > 0);
      out.push({ schema, batches });
      start = at;
      continue;
    }
    const message = Message.decode(bytes.subarray(at + 8, at + 8 + length));
    at += 8 + length + message.bodyLength;
  }
  expect(start).toBe(bytes.length); // every stream ended
  return out;
}

/** A stream's rows as the JSON read writes them: the timestamp, then the cells (null: missing). */
function rowsOf(stream: Stream): Row[] {
  const rows: Row[] = [];
  for (const b of stream.batches) {
    const columns = stream.schema.fields.map((f) => b.getChild(f.name)!);
    for (let i = 0; i < b.numRows; i++) {
      const [t, ...cells] = columns.map((c) => c.get(i) as number | null);
      rows.push([iso(Number(t) / 1000), ...cells]);
    }
  }
  return rows;
}

const cursorOf = (streams: Stream[]): string | undefined => streams.at(-1)?.batches.at(-1)?.metadata.get("meridian:cursor");

describe("D64 Arrow answers", () => {
  let server: TestServer;
  let key: string;
  let api: ReturnType<typeof tsApi>;
  let d: string, w: string, empty: string;
  const W_KINDS = [FieldKind.Single, FieldKind.Flag];

  const { fetchBytes, formatBytes, jsonOf, rawGet } = answerFetcher(() => ({ server, key, dataset: d }));
  const arrowOf = async (method: string, path: string, headers: Record<string, string> = {}, body?: unknown) =>
    streamsOf(await formatBytes(ARROW, method, path, headers, body));
  const values = (series: string, query = "") => `/api/ts/dataset/${d}/timeseries/${series}/values${query ? "?" + query : ""}`;
  const many = (query = "") => `/api/ts/dataset/${d}/timeseries/values${query ? "?" + query : ""}`;

  beforeAll(async () => {
    server = await startTestServer();
    key = await server.key(TS_RW);
    api = tsApi(server, key);
    d = await api.dataset();
    w = await api.series(d);
    empty = await api.series(d);
    await api.upload(d, w, makeRows(70_000)); // five blocks
  }, 60_000);
  afterAll(() => server.close());

  it("D64 the schema: timestamp as timestamp[ms, UTC], one column per data field named as the field (Single float32, Double float64, Flag int32), metadata naming the series and fields", async () => {
    const s = await api.series(d, {
      dataFields: [
        { name: "level", dataType: "Single" },
        { name: "flow", dataType: "Double" },
        { name: "quality", dataType: "Flag" },
      ],
    });
    const [stream, ...more] = await arrowOf("GET", values(s));
    expect(more).toEqual([]);
    expect(stream.schema.fields.map((f) => [f.name, String(f.type), f.nullable])).toEqual([
      ["timestamp", "Timestamp<MILLISECOND, UTC>", false],
      ["level", "Float32", true],
      ["flow", "Float64", true],
      ["quality", "Int32", true],
    ]);
    expect(stream.schema.metadata.get("meridian:time_series_id")).toBe(s);
    expect(JSON.parse(stream.schema.metadata.get("meridian:data_fields")!)).toEqual([
      { name: "level", dataType: "Single" },
      { name: "flow", dataType: "Double" },
      { name: "quality", dataType: "Flag" },
    ]);
    // No rows: the schema and the end of the stream.
    expect(stream.batches).toEqual([]);
  });

  it("D64 Arrow answer equals the JSON read cell by cell: W1-like rows, one record batch per block", async () => {
    const [stream] = await arrowOf("GET", values(w));
    expect(stream.batches.length).toBe(5);
    const json = await jsonOf("GET", values(w));
    expect(rowsOf(stream)).toEqual(asStored(json.data, W_KINDS));
  });

  it("D64 Arrow answer equals the JSON read cell by cell for random series (missing values, NaN, all three types, empty ranges)", async () => {
    const kinds = THREE_KINDS;
    const { id, sid } = await threeFieldSeries(server, api, d);
    const cell = fc.oneof(
      fc.constant(null),
      fc.constant(NaN),
      fc.constantFrom(-1, 0, 2, 3.4e38, -1e-30),
      fc.integer({ min: -99999, max: 99999 }).map((n) => n / 1000),
    );
    const seriesArb = randomRowsArb(40_000, cell);
    await fc.assert(
      fc.asyncProperty(seriesArb, fc.nat(), fc.nat(), async (s, i, j) => {
        const timestamps = timestampsOf(s);
        await storeRows(server, sid, kinds, timestamps, s.cells);
        const query = rangeQuery(s.start, timestamps, i, j);
        const [stream] = await arrowOf("GET", values(id, query));
        expect(rowsOf(stream)).toEqual(asStored((await jsonOf("GET", values(id, query))).data, kinds));
      }),
      { numRuns: 25 },
    );
  }, 120_000);

  it("D64 pages (api-version 3): the rows of each page equal the JSON page's, and a page that is not the last ends with its cursor", async () => {
    const paged = { "api-version": "3" };
    let cursor: string | undefined;
    const rows: Row[] = [];
    let pages = 0;
    do {
      const query = `limit=16536${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
      const streams = await arrowOf("GET", values(w, query), paged);
      const json = await jsonOf("GET", values(w, query), paged);
      expect(streams.length).toBe(1);
      expect(rowsOf(streams[0])).toEqual(asStored(json.data, W_KINDS));
      rows.push(...rowsOf(streams[0]));
      cursor = cursorOf(streams);
      expect(cursor === undefined).toBe(json.cursor === undefined);
      pages++;
    } while (cursor);
    expect(pages).toBe(5); // 70,000 rows in pages of 16,536
    expect(rows).toEqual(asStored((await jsonOf("GET", values(w))).data, W_KINDS));
  });

  it("D64 D35 pages of any size over any range are the JSON pages row for row (blocks written a group at a time off the event loop, the next group started early only when it cannot change where the page ends)", async () => {
    // Six Double fields make a block's batch nearly 1 MiB, so a group holds one or two of the five
    // blocks: pages end inside a group, at its edge, or past it, and ranges cut the first and last blocks.
    const kinds = Array<FieldKind>(6).fill(FieldKind.Double);
    const wide = await api.series(d, { dataFields: kinds.map((_, k) => ({ name: `d${k}`, dataType: "Double" })) });
    const sid = (await server.app.backend.metadata.getSeries(d, wide))!.sid;
    const start = Date.UTC(2024, 0, 1) / 1000;
    const n = 70_000;
    const timestamps = Float64Array.from({ length: n }, (_, k) => start + k * 60);
    await storeRows(
      server,
      sid,
      kinds,
      timestamps,
      Array.from({ length: n }, (_, k) => kinds.map((_, c) => ((k * 7 + c) % 1000) / 8)),
    );
    const paged = { "api-version": "3" };
    await fc.assert(
      // Ranges start mostly inside the first blocks, where a group takes fewer rows than it stores.
      fc.asyncProperty(
        fc.integer({ min: 4000, max: 80_000 }),
        fc.nat(20_000),
        fc.integer({ min: 20_000, max: n - 1 }),
        fc.boolean(),
        async (limit, a, b, ranged) => {
          const range = ranged ? `from=${iso(start + a * 60)}&to=${iso(start + b * 60)}&` : "";
          let cursor: string | undefined;
          let pages = 0;
          const rows: Row[] = [];
          do {
            // A cursor says where to resume: `from` goes with the first page only (the rest keep `to`).
            const bounds = cursor
              ? ranged
                ? `to=${iso(start + b * 60)}&cursor=${encodeURIComponent(cursor)}&`
                : `cursor=${encodeURIComponent(cursor)}&`
              : range;
            const query = `${bounds}limit=${limit}`;
            const [streams, json] = await Promise.all([
              arrowOf("GET", values(wide, query), paged),
              jsonOf("GET", values(wide, query), paged),
            ]);
            expect(rowsOf(streams[0])).toEqual(json.data);
            rows.push(...rowsOf(streams[0]));
            cursor = cursorOf(streams);
            expect(cursor === undefined).toBe(json.cursor === undefined);
            pages++;
          } while (cursor && pages < 30);
          expect(rows).toEqual((await jsonOf("GET", values(wide, range.slice(0, -1)))).data);
        },
      ),
      { numRuns: 20 },
    );
  }, 240_000);

  it("D64 many series: one stream per series, in the order asked (an empty series is a stream without batches), whole range and paged", async () => {
    const ids = [empty, w, empty === w ? w : await api.series(d)];
    await api.upload(d, ids[2], makeRows(100, Date.UTC(2030, 0, 1) / 1000));
    const streams = await arrowOf("POST", many(), {}, ids);
    const json = await jsonOf("POST", many(), {}, ids);
    expect(streams.map((s) => s.schema.metadata.get("meridian:time_series_id"))).toEqual(ids);
    expect(streams.map(rowsOf)).toEqual(json.data.map((rows: Row[]) => asStored(rows, W_KINDS)));
    // Paged: each page's streams are the JSON page's entries; together, the whole read.
    const paged = { "api-version": "3" };
    let cursor: string | undefined;
    const got = new Map<string, Row[]>();
    do {
      const query = `limit=20000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
      const page = await arrowOf("POST", many(query), paged, ids);
      const jsonPage = await jsonOf("POST", many(query), paged, ids);
      expect(page.map((s) => [s.schema.metadata.get("meridian:time_series_id"), rowsOf(s)])).toEqual(
        jsonPage.data.map((e: { timeSeriesId: string; values: Row[] }) => [e.timeSeriesId, asStored(e.values, W_KINDS)]),
      );
      for (const s of page) {
        const id = s.schema.metadata.get("meridian:time_series_id")!;
        got.set(id, [...(got.get(id) ?? []), ...rowsOf(s)]);
      }
      cursor = cursorOf(page);
    } while (cursor);
    expect(ids.map((id) => got.get(id))).toEqual(json.data.map((rows: Row[]) => asStored(rows, W_KINDS)));
  });

  it("D64 chart reads answer Arrow too: the rows of the JSON chart, one series and many", async () => {
    const [stream] = await arrowOf("GET", `${values(w)}/chart?width=300`);
    const json = await jsonOf("GET", `${values(w)}/chart?width=300`);
    expect(json.data.length).toBeGreaterThan(300);
    expect(rowsOf(stream)).toEqual(asStored(json.data, W_KINDS));
    const path = `/api/ts/dataset/${d}/timeseries/values/chart?width=50`;
    const streams = await arrowOf("POST", path, {}, [w, empty]);
    expect(streams.map(rowsOf)).toEqual((await jsonOf("POST", path, {}, [w, empty])).data.map((rows: Row[]) => asStored(rows, W_KINDS)));
  });

  it("D64 compressed by Content-Encoding like every answer (zstd: one frame)", async () => {
    const { status, headers, body } = await rawGet(values(w), { accept: ARROW, "accept-encoding": "zstd" });
    expect(status).toBe(200);
    expect(headers["content-encoding"]).toBe("zstd");
    const plain = zstdDecompressSync(body);
    expect(body.length).toBeLessThan(plain.length / 3);
    expect(rowsOf(streamsOf(plain)[0])).toEqual(asStored((await jsonOf("GET", values(w))).data, W_KINDS));
  });

  it("D64 an Accept that allows none of JSON, Arrow or Parquet (and no */*) is 406 problem+json NOT_ACCEPTABLE; none sent, */*, JSON's own and D7's text/plain are JSON; q-values rank", async () => {
    for (const accept of [
      "text/csv",
      "application/xml, text/html",
      "application/json;q=0",
      "image/*",
      "text/plain;q=0, application/json;q=0",
    ]) {
      for (const path of [values(w), `${values(w)}/chart`]) {
        const r = await fetchBytes("GET", path, { accept });
        expect(r.status, accept).toBe(406);
        expect(r.headers.get("content-type")).toMatch(/^application\/problem\+json/);
        const problem = JSON.parse(Buffer.from(r.bytes).toString());
        expect(problem).toMatchObject({ status: 406, reason: "NOT_ACCEPTABLE" });
        expect(problem.detail).toContain(ARROW);
      }
    }
    const r406 = await fetchBytes("POST", many(), { accept: "text/csv" }, [w]);
    expect(r406.status).toBe(406);
    // D7: the platform's SDK sends text/plain and parses JSON.
    for (const accept of [undefined, "*/*", "application/json", "text/plain", "application/*", `${ARROW};q=0.5, application/json`]) {
      const r = await fetchBytes("GET", `${values(w)}/chart?width=10`, accept ? { accept } : {});
      expect(r.headers.get("content-type"), accept).toMatch(/^application\/json/);
    }
    const r = await fetchBytes("GET", `${values(w)}/chart?width=10`, { accept: `application/json;q=0.5, ${ARROW}` });
    expect(r.headers.get("content-type")).toBe(ARROW);
  });

  it("D64 an Accept range with parameters matches the answer's own: application/json; charset=utf-8 and D7's text/plain; charset=utf-8 are JSON", async () => {
    for (const accept of ["application/json; charset=utf-8", "application/json;charset=UTF-8", "text/plain; charset=utf-8"]) {
      for (const path of [values(w), `${values(w)}/chart?width=10`]) {
        const r = await fetchBytes("GET", path, { accept });
        expect([r.status, r.headers.get("content-type")], `${accept} ${path}`).toEqual([200, "application/json; charset=utf-8"]);
      }
      const r = await fetchBytes("POST", many(), { accept }, [w]);
      expect([r.status, r.headers.get("content-type")], accept).toEqual([200, "application/json; charset=utf-8"]);
    }
  });

  it("D64 JSON refused with q=0 stays refused beside a wildcard: D7's text/plain does not bring it back", async () => {
    for (const accept of ["application/json;q=0, */*", "application/json;q=0, application/*"]) {
      const r = await fetchBytes("GET", values(w), { accept });
      expect([r.status, r.headers.get("content-type")], accept).toEqual([200, ARROW]);
    }
    // D7's alias named by its type's wildcard, alone or ranked over */*, is still JSON.
    for (const accept of ["text/*", "*/*;q=0.1, text/*"]) {
      const r = await fetchBytes("GET", values(w), { accept });
      expect([r.status, r.headers.get("content-type")], accept).toEqual([200, "application/json; charset=utf-8"]);
    }
    const all = `application/json;q=0, ${ARROW};q=0, application/vnd.apache.parquet;q=0, */*`;
    expect((await fetchBytes("GET", values(w), { accept: all })).status).toBe(406);
  });

  it("D28 a pooled buffer is reused only once its bytes are sent: concurrent reads over HTTP/1.1 and HTTP/2, fast and slow, identity and zstd, get the same bytes", async () => {
    const s = await api.series(d);
    await api.upload(d, s, makeRows(200_000));
    const h2 = (accept: string, encoding: string, slow: boolean) =>
      new Promise<Buffer>((resolve, reject) => {
        const c = http2.connect(server.url);
        const req = c.request({ ":path": values(s), ...tsHeaders(key, d), accept, "accept-encoding": encoding });
        const parts: Buffer[] = [];
        req.on("data", (chunk: Buffer) => {
          parts.push(Buffer.from(chunk));
          if (slow) {
            req.pause();
            setTimeout(() => req.resume(), 2);
          }
        });
        req.on("end", () => {
          c.close();
          resolve(Buffer.concat(parts));
        });
        req.on("error", reject);
      });
    const h1 = async (accept: string, encoding: string) =>
      Buffer.from((await fetchBytes("GET", values(s), { accept, "accept-encoding": encoding })).bytes);
    for (const accept of [ARROW, "application/json"]) {
      // fetch inflates zstd itself; the HTTP/2 answers are inflated here.
      const expected = await h1(accept, "identity");
      const got = await Promise.all([
        h2(accept, "identity", false),
        h2(accept, "identity", true),
        h2(accept, "zstd", true),
        h1(accept, "zstd"),
      ]);
      got[2] = zstdDecompressSync(got[2]);
      for (const g of got) expect(g.equals(expected), accept).toBe(true);
    }
  }, 60_000);

  it("D64 D28 a client that stops reading an Arrow answer holds no more of the server's memory than one that stops reading JSON", async () => {
    const big = await api.series(d);
    await api.upload(d, big, makeRows(400_000)); // 25 blocks: far more than the socket's buffers take
    /** Pooled bytes a read holds while its client reads nothing, once the server has stopped writing. */
    const heldByStalledRead = async (accept: string, encoding: string): Promise<number> => {
      const before = poolStats().held;
      const socket = connect(Number(new URL(server.url).port), "127.0.0.1");
      socket.pause(); // read nothing
      const headers = { ...tsHeaders(key, d), accept, "accept-encoding": encoding, host: "x" };
      socket.write(
        `GET ${values(big)} HTTP/1.1\r\n${Object.entries(headers)
          .map(([k, v]) => `${k}: ${v}\r\n`)
          .join("")}\r\n`,
      );
      // Wait until the server stops producing: what it holds then is what a stalled read costs.
      let last = -1;
      for (let stable = 0; stable < 5;) {
        await new Promise((r) => setTimeout(r, 100));
        const now = poolStats().held;
        stable = now === last ? stable + 1 : 0;
        last = now;
      }
      socket.destroy();
      // Once the client is gone, every pooled buffer of the read is given back (issue 40).
      for (let i = 0; i < 100 && poolStats().held !== before; i++) await new Promise((r) => setTimeout(r, 20));
      expect(poolStats().held).toBe(before);
      return last - before;
    };
    for (const encoding of ["identity", "zstd"]) {
      const json = await heldByStalledRead("application/json", encoding);
      const arrow = await heldByStalledRead(ARROW, encoding);
      // A few pooled buffers at most, whatever the range: a JSON block's buffer is 2 MiB, an Arrow one 512 KiB.
      expect(json, `JSON ${encoding}`).toBeLessThanOrEqual(8 * 2 ** 20);
      expect(arrow, `Arrow ${encoding}`).toBeLessThanOrEqual(json);
    }
  }, 60_000);
});
