// The value writes (D30, D68): rows of one series, of many series of a
// dataset in one request, and a stream of such requests for collectors that
// keep a connection open. Every row is checked against its series' fields
// before anything is stored; a request is then one write of the block store,
// all or nothing, through the group commit (D66).
import { create } from "@bufbuild/protobuf";
import { ConnectError, type HandlerContext } from "@connectrpc/connect";
import type { ListValue } from "@bufbuild/protobuf/wkt";
import {
  UploadManyValuesResponseSchema,
  UploadValuesResponseSchema,
  type SeriesValues,
  type UploadManyValuesRequest,
  type UploadManyValuesResponse,
  type UploadValuesRequest,
  type UploadValuesResponse,
} from "../gen/meridian/timeseries/v1/time_series_pb.js";
import { invalidField, notFound, ViolationList } from "../kernel/errors.js";
import { guid } from "../kernel/ids.js";
import { parseTimestamp } from "../kernel/timestamps.js";
import type { BlockStore, SeriesWrite } from "./blocks/block-store.js";
import type { FieldKind } from "./blocks/block-codec.js";
import type { DatasetRecord, MetadataStore, SeriesRecord } from "./metadata-store.js";
import { RowBuilder, cellProblem, kindsOf } from "./value-rows.js";
import { uploadBodyKey, type UploadBody } from "../kernel/upload-body.js";
import { ColumnProblems } from "./columnar/columnar-rows.js";
import { manySeriesParts, partRows, singleSeriesRows } from "./columnar/upload.js";
import { concatRows, type RowSet } from "./blocks/row-set.js";

/** Row violations named in one 400. */
const MAX_REPORTED = 20;

/**
 * Series entries in one many-series write (D68, D51): a 64 MiB body of
 * one-row entries would be ~800,000 lookups and writes on the event loop
 * while readers wait; a collector with more series sends more requests.
 */
export const MAX_SERIES_A_WRITE = 10_000;

export interface ValueUploadDeps {
  blocks: BlockStore;
  metadata: MetadataStore;
  datasetFor: (ctx: HandlerContext, access: "write", datasetId: string) => Promise<DatasetRecord>;
  seriesIn: (d: DatasetRecord, seriesId: string, field: string) => Promise<SeriesRecord>;
}

/** Reports at most MAX_REPORTED of a request's row violations (the first ones). */
class RowProblems {
  private reported = 0;
  readonly list = new ViolationList();

  add(field: string, message: string): void {
    if (this.reported++ < MAX_REPORTED) this.list.add(field, message);
  }
}

/** Rows in the read side's layout ([timestamp, field1, ...]) checked against `kinds` into `into`; problems named under `at`. */
function gatherRows(data: readonly ListValue[], kinds: readonly FieldKind[], into: RowBuilder, at: string, problems: RowProblems): void {
  data.forEach((row, r) => {
    const cells = row.values;
    if (cells.length !== kinds.length + 1)
      return problems.add(`${at}[${r}]`, `must hold a timestamp and ${kinds.length} value(s), one per data field`);
    const first = cells[0].kind;
    const t = first.case === "stringValue" ? parseTimestamp(first.value) : undefined;
    if (t === undefined) return problems.add(`${at}[${r}][0]`, "must be a timestamp yyyy-MM-ddTHH:mm:ss between 0001 and 9999");
    const i = into.push(t);
    for (let c = 0; c < kinds.length; c++) {
      const cell = cells[c + 1].kind;
      if (cell.case === "nullValue") continue;
      const why = cell.case === "numberValue" ? cellProblem(kinds[c], cell.value) : "must be a number or null";
      if (why) problems.add(`${at}[${r}][${c + 1}]`, why);
      else into.set(i, c, cell.value as number);
    }
  });
}

export function valueUploads({ blocks, metadata, datasetFor, seriesIn }: ValueUploadDeps) {
  /**
   * D68: the rows of a many-series request checked and gathered by series
   * (a series named twice gets its rows together, the later winning on
   * equal timestamps, D30). Throws a 404 for an id that is not the
   * dataset's, a 400 naming the rows at fault; nothing is stored then.
   */
  const gatherMany = async (d: DatasetRecord, entries: readonly SeriesValues[], at = "series"): Promise<SeriesWrite[]> => {
    if (entries.length > MAX_SERIES_A_WRITE)
      throw invalidField(
        at,
        `may hold at most ${MAX_SERIES_A_WRITE.toLocaleString("en")} series entries a request (this one has ${entries.length.toLocaleString("en")}); send the rest in another`,
      );
    const problems = new RowProblems();
    const ids = entries.map((e, i) => guid(e.timeSeriesId, `${at}[${i}].timeSeriesId`));
    const found = new Map((await metadata.getSeriesMany(d.id, [...new Set(ids)])).map((s) => [s.id, s]));
    const builders = new Map<string, { series: SeriesRecord; kinds: FieldKind[]; rows: RowBuilder }>();
    entries.forEach((e, i) => {
      const series = found.get(ids[i]);
      if (series === undefined) throw notFound(`no time series ${ids[i]} in dataset ${d.id} (${at}[${i}])`, "TIME_SERIES_NOT_FOUND");
      let b = builders.get(series.id);
      if (b === undefined) {
        const kinds = kindsOf(series.dataFields);
        builders.set(series.id, (b = { series, kinds, rows: new RowBuilder(kinds, Math.max(1, e.data.length)) }));
      }
      gatherRows(e.data, b.kinds, b.rows, `${at}[${i}].data`, problems);
    });
    problems.list.throwIfAny();
    return [...builders.values()].map((b) => ({ sid: b.series.sid, kinds: b.kinds, rows: b.rows.take() }));
  };

  /**
   * D69: a columnar many-series body's rows by series, checked as
   * gatherMany() checks JSON rows (a 404 for a series not of the dataset).
   */
  const gatherColumnar = async (d: DatasetRecord, body: UploadBody): Promise<SeriesWrite[]> => {
    const parts = manySeriesParts(body);
    const ids = parts.map((p) => guid(p.id, `${p.at}time_series_id[${p.from}]`));
    const found = new Map((await metadata.getSeriesMany(d.id, [...new Set(ids)])).map((s) => [s.id, s]));
    const problems = new ColumnProblems();
    const bySeries = new Map<string, { series: SeriesRecord; rows: RowSet[] }>();
    parts.forEach((p, i) => {
      const series = found.get(ids[i]);
      if (series === undefined)
        throw notFound(`no time series ${ids[i]} in dataset ${d.id} (${p.at}time_series_id[${p.from}])`, "TIME_SERIES_NOT_FOUND");
      const rows = partRows(p, series.dataFields, problems);
      if (!rows) return;
      let s = bySeries.get(series.id);
      if (s === undefined) bySeries.set(series.id, (s = { series, rows: [] }));
      s.rows.push(rows);
    });
    problems.list.throwIfAny();
    return [...bySeries.values()].map((s) => ({
      sid: s.series.sid,
      kinds: kindsOf(s.series.dataFields),
      rows: s.rows.length === 1 ? s.rows[0] : concatRows(...s.rows), // in body order: of equal timestamps the later wins (D30)
    }));
  };

  /** Stores what gatherMany() gathered: one write, all or nothing. */
  const storeMany = async (writes: SeriesWrite[]): Promise<UploadManyValuesResponse> =>
    create(UploadManyValuesResponseSchema, { count: await blocks.upsertMany(writes), series: writes.length });

  return {
    uploadValues: async (req: UploadValuesRequest, ctx: HandlerContext): Promise<UploadValuesResponse> => {
      const s = await seriesIn(await datasetFor(ctx, "write", req.datasetId), req.timeSeriesId, "timeSeriesId");
      const kinds = kindsOf(s.dataFields);
      const body = ctx.values.get(uploadBodyKey);
      if (body)
        return create(UploadValuesResponseSchema, { count: await blocks.upsert(s.sid, kinds, singleSeriesRows(body, s.dataFields)) });
      const rows = new RowBuilder(kinds, Math.max(1, req.data.length));
      const problems = new RowProblems();
      gatherRows(req.data, kinds, rows, "data", problems);
      problems.list.throwIfAny();
      return create(UploadValuesResponseSchema, { count: await blocks.upsert(s.sid, kinds, rows.take()) });
    },

    uploadManyValues: async (req: UploadManyValuesRequest, ctx: HandlerContext): Promise<UploadManyValuesResponse> => {
      const d = await datasetFor(ctx, "write", req.datasetId);
      const body = ctx.values.get(uploadBodyKey);
      return storeMany(body ? await gatherColumnar(d, body) : await gatherMany(d, req.series));
    },

    /**
     * Each message stored as it arrives, all or nothing; every message must
     * name the dataset of the first. A failing message ends the stream with
     * its error, which says how many messages before it were stored.
     */
    uploadValuesStream: async (
      messages: AsyncIterable<UploadManyValuesRequest>,
      ctx: HandlerContext,
    ): Promise<UploadManyValuesResponse> => {
      let d: DatasetRecord | undefined;
      let stored = 0;
      let count = 0;
      const series = new Set<number>();
      for await (const m of messages) {
        try {
          if (d === undefined) d = await datasetFor(ctx, "write", m.datasetId);
          else if (m.datasetId.toLowerCase() !== d.id)
            throw invalidField("datasetId", `must be ${d.id}, the dataset of the stream's first message`);
          const writes = await gatherMany(d, m.series);
          count += (await storeMany(writes)).count;
          for (const w of writes) series.add(w.sid);
          stored++;
        } catch (e) {
          // The same error (code, details), saying where in the stream it stopped.
          const err = ConnectError.from(e);
          const details = err.details.filter((x): x is Extract<typeof x, { desc: unknown }> => "desc" in x);
          throw new ConnectError(
            `message ${stored} of the stream failed (the ${stored} before it are stored): ${err.rawMessage}`,
            err.code,
            err.metadata,
            details,
            e,
          );
        }
      }
      return create(UploadManyValuesResponseSchema, { count, series: series.size });
    },
  };
}
