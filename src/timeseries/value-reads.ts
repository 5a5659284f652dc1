// The four value reads: one series or many (D26), for REST as JSON text (D25)
// or the columnar format the caller accepts (D64), or as columns for gRPC and
// Connect, whole range (D28: streamed block
// by block) or, with api-version 3, in pages with cursors (D26, D27, D35).
// Requests become a walk plan here; value-walk does the walking.
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { ReadManyValuesRequest, ReadValuesRequest, TimeSeriesService } from "../gen/meridian/timeseries/v1/time_series_pb.js";
import type { BlockStore } from "./blocks/block-store.js";
import type { CursorSeal } from "../kernel/cursor-seal.js";
import { apiVersionOf } from "../http/api-version.js";
import { invalidField } from "../kernel/errors.js";
import type { DatasetRecord, SeriesRecord } from "./metadata-store.js";
import { columnChunks, columnEncoderFor } from "./value-columns.js";
import { issueCursor, openCursor, type CursorScope, type ResumePoint } from "./value-cursor.js";
import { formattedAnswer } from "./columnar/answer.js";
import { walkValues, type Encoders, type WalkPlan, type WalkStep } from "./value-walk.js";
import { rangeOf, sent } from "./value-range.js";

/** Spec, paged reading: page size bounds. */
export const PAGE = { default: 100_000, min: 16_536, max: 5_000_000, entries: 1_000 } as const;

export interface ValueReadDeps {
  blocks: BlockStore;
  /** Told how many rows each read step took (the metrics, D43). */
  onRows?: (rows: number) => void;
  cursors: CursorSeal;
  /** The dataset of the path, checked against D14. */
  datasetFor: (ctx: HandlerContext, access: "read", datasetId: string) => Promise<DatasetRecord>;
  /** A series of that dataset by the id sent in `field`, or a 404. */
  seriesIn: (d: DatasetRecord, seriesId: string, field: string) => Promise<SeriesRecord>;
}

type ReadRequest = ReadValuesRequest | ReadManyValuesRequest;

/** A read's steps, stopped when the caller goes away (D28: a client that disconnects stops the work), its rows counted (D43). */
export async function* observed<T>(
  walk: AsyncGenerator<WalkStep<T>, ResumePoint | undefined>,
  ctx: HandlerContext,
  onRows?: (rows: number) => void,
): AsyncGenerator<WalkStep<T>, ResumePoint | undefined> {
  try {
    for (;;) {
      ctx.signal.throwIfAborted();
      const step = await walk.next();
      if (step.done) return step.value;
      if (step.value.kind === "rows") onRows?.(step.value.rows);
      yield step.value;
    }
  } finally {
    await walk.return(undefined); // stopped early: the walk is closed too (D28)
  }
}

/** D26: the dataset of a multi-series read and its series, in the order listed: at least one, each of the dataset, none twice. */
export async function listedSeries(
  { datasetFor, seriesIn }: Pick<ValueReadDeps, "datasetFor" | "seriesIn">,
  ctx: HandlerContext,
  req: { datasetId: string; timeSeriesIds: string[] },
): Promise<{ d: DatasetRecord; series: SeriesRecord[] }> {
  const d = await datasetFor(ctx, "read", req.datasetId);
  if (req.timeSeriesIds.length === 0) throw invalidField("timeSeriesIds", "must name at least one time series");
  const seen = new Set<string>();
  const series: SeriesRecord[] = [];
  for (const [i, raw] of req.timeSeriesIds.entries()) {
    const s = await seriesIn(d, raw, `timeSeriesIds[${i}]`);
    if (seen.has(s.id)) throw invalidField(`timeSeriesIds[${i}]`, `${s.id} is listed twice`);
    seen.add(s.id);
    series.push(s);
  }
  return { d, series };
}

interface Read {
  plan: WalkPlan;
  scope: CursorScope;
  paged: boolean;
}

export function valueReads(
  deps: ValueReadDeps,
): Pick<ServiceImpl<typeof TimeSeriesService>, "readValues" | "readValuesJson" | "readManyValues" | "readManyValuesJson"> {
  const { blocks, cursors, datasetFor, seriesIn } = deps;

  /**
   * The page size, or undefined for a whole-range read. D9: api-version 3 alone
   * selects paging; without it limit and cursor are ignored (clients may send a
   * limit regardless). The limit is clamped, never rejected.
   */
  const pageLimit = (req: ReadRequest, ctx: HandlerContext): number | undefined => {
    if (apiVersionOf(ctx) !== 3) return undefined;
    if (req.limit === undefined) return PAGE.default;
    const asked = Number(req.limit);
    return Math.min(PAGE.max, Math.max(PAGE.min, asked));
  };

  const plan = (
    req: ReadRequest,
    scope: CursorScope,
    series: SeriesRecord[],
    limit: number | undefined,
    from: number,
    to: number,
  ): Read => {
    const paged = limit !== undefined;
    const start: ResumePoint = paged && sent(req.cursor) ? openCursor(cursors, scope, req.cursor) : { index: 0, after: null };
    const multi = scope.endpoint === "multi";
    return {
      scope,
      paged,
      plan: { series, from, to, start, limit: limit ?? Infinity, maxEntries: paged && multi ? PAGE.entries : Infinity },
    };
  };

  const single = async (req: ReadValuesRequest, ctx: HandlerContext): Promise<Read> => {
    const s = await seriesIn(await datasetFor(ctx, "read", req.datasetId), req.timeSeriesId, "timeSeriesId");
    const limit = pageLimit(req, ctx);
    if (limit !== undefined && sent(req.cursor) && sent(req.from)) {
      throw invalidField("from", "must not be sent with a cursor on the single-series endpoint: reading resumes where the cursor says");
    }
    const [from, to] = rangeOf(req.from, req.to);
    return plan(req, { endpoint: "single", datasetId: s.datasetId, seriesIds: [s.id] }, [s], limit, from, to);
  };

  const multi = async (req: ReadManyValuesRequest, ctx: HandlerContext): Promise<Read> => {
    const { d, series } = await listedSeries(deps, ctx, req);
    const limit = pageLimit(req, ctx);
    const [from, to] = rangeOf(req.from, req.to);
    return plan(req, { endpoint: "multi", datasetId: d.id, seriesIds: series.map((s) => s.id) }, series, limit, from, to);
  };

  const steps = <T>(read: Read, encoders: Encoders<T>, ctx: HandlerContext) =>
    observed(walkValues(blocks, read.plan, encoders), ctx, deps.onRows);

  const cursorFor = (read: Read) => (at: ResumePoint) => issueCursor(cursors, read.scope, at);

  const rest = (reading: () => Promise<Read>, ctx: HandlerContext) =>
    formattedAnswer(
      ctx,
      reading,
      (read, encoders) => steps(read, encoders, ctx),
      (read) => ({ multi: read.scope.endpoint === "multi", paged: read.paged, cursorFor: cursorFor(read), series: read.plan.series }),
    );

  async function* columns(reading: () => Promise<Read>, ctx: HandlerContext) {
    const read = await reading();
    yield* columnChunks(steps(read, { block: columnEncoderFor(ctx) }, ctx), cursorFor(read));
  }

  return {
    readValues: (req, ctx) => columns(() => single(req, ctx), ctx),
    readManyValues: (req, ctx) => columns(() => multi(req, ctx), ctx),
    readValuesJson: (req, ctx) => rest(() => single(req, ctx), ctx),
    readManyValuesJson: (req, ctx) => rest(() => multi(req, ctx), ctx),
  };
}
