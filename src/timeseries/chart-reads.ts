// The chart reads (D50): of each series, the rows a line chart of `width`
// pixel columns needs (M4), chosen by the addon from the series' blocks in one
// pass (native/chart.ts Chart), then written by the value reads' own
// encoders and framing, for REST in the format the caller accepts (JSON rows,
// Arrow, Parquet, D64) and as columns for gRPC and Connect. What a chart holds
// grows with its width, not with the rows read; what it reads too (D65):
// blocks inside one bucket by their summaries (chart-blocks.ts), hot ones from
// memory (blocks/block-cache.ts).
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { ReadChartRequest, ReadManyChartRequest, TimeSeriesService } from "../gen/meridian/timeseries/v1/time_series_pb.js";
import { MAX_CHART_WIDTH } from "../native/chart.js";
import { chartOf, type ChartSource } from "./chart-blocks.js";
import { columnChunks, columnEncoderFor } from "./value-columns.js";
import { formattedAnswer } from "./columnar/answer.js";
import { rangeOf, sent } from "./value-range.js";
import { listedSeries, observed, type ValueReadDeps } from "./value-reads.js";
import type { Encoders, WalkSeries, WalkStep } from "./value-walk.js";

/** D50: pixel columns, clamped like the page limit, never an error. */
export const CHART_WIDTH = { default: 1_000, min: 1, max: MAX_CHART_WIDTH } as const;

export type ChartReadDeps = ValueReadDeps & {
  /** Where charts find their blocks: the block cache (or the store through it, when it is off). */
  charts: ChartSource;
};

interface ChartPlan {
  series: WalkSeries[];
  /** The multi-series endpoint: one row array per id. */
  multi: boolean;
  /** The range asked; an end not sent is the series' own first or last timestamp. */
  from: number | undefined;
  to: number | undefined;
  width: number;
}

function widthOf(asked: bigint | undefined): number {
  if (asked === undefined) return CHART_WIDTH.default;
  return Number(asked < CHART_WIDTH.min ? CHART_WIDTH.min : asked > CHART_WIDTH.max ? CHART_WIDTH.max : asked);
}

function rangeAsked(req: { from?: string; to?: string }): Pick<ChartPlan, "from" | "to"> {
  const [from, to] = rangeOf(req.from, req.to);
  return { from: sent(req.from) ? from : undefined, to: sent(req.to) ? to : undefined };
}

/** Each series' chart rows as steps of the value reads' walk: begin, the rows (when there are any), end. */
async function* chartWalk<T>(
  deps: ChartReadDeps,
  plan: ChartPlan,
  { block: encode }: Encoders<T>,
  signal: AbortSignal,
): AsyncGenerator<WalkStep<T>, undefined> {
  for (const s of plan.series) {
    yield { kind: "begin", series: s };
    const bounds = plan.from === undefined || plan.to === undefined ? await deps.blocks.bounds(s.sid) : undefined;
    const from = plan.from ?? bounds?.first;
    const to = plan.to ?? bounds?.last;
    // No rows, or an end of the series outside the range asked: nothing to draw.
    if (from !== undefined && to !== undefined && from <= to) {
      let first = true;
      for (const payload of await chartOf(deps.charts, s.sid, from, to, plan.width, signal)) {
        const e = encode(payload, from, to, Infinity, first);
        first = false;
        yield { kind: "rows", out: e.out, rows: e.rows };
      }
    }
    yield { kind: "end", series: s };
  }
  return undefined;
}

const noCursor = (): string => {
  throw new Error("a chart read has no pages");
};

export function chartReads(
  deps: ChartReadDeps,
): Pick<ServiceImpl<typeof TimeSeriesService>, "readChart" | "readChartJson" | "readManyChart" | "readManyChartJson"> {
  const single = async (req: ReadChartRequest, ctx: HandlerContext): Promise<ChartPlan> => {
    const s = await deps.seriesIn(await deps.datasetFor(ctx, "read", req.datasetId), req.timeSeriesId, "timeSeriesId");
    return { series: [s], multi: false, ...rangeAsked(req), width: widthOf(req.width) };
  };
  const multi = async (req: ReadManyChartRequest, ctx: HandlerContext): Promise<ChartPlan> => {
    const { series } = await listedSeries(deps, ctx, req);
    return { series, multi: true, ...rangeAsked(req), width: widthOf(req.width) };
  };
  const steps = <T>(plan: ChartPlan, encoders: Encoders<T>, ctx: HandlerContext) =>
    observed(chartWalk(deps, plan, encoders, ctx.signal), ctx, deps.onRows);

  const rest = (planning: () => Promise<ChartPlan>, ctx: HandlerContext) =>
    formattedAnswer(
      ctx,
      planning,
      (plan, encoders) => steps(plan, encoders, ctx),
      (plan) => ({ multi: plan.multi, paged: false, cursorFor: noCursor, series: plan.series }),
    );

  async function* columns(planning: () => Promise<ChartPlan>, ctx: HandlerContext) {
    yield* columnChunks(steps(await planning(), { block: columnEncoderFor(ctx) }, ctx), noCursor);
  }

  return {
    readChart: (req, ctx) => columns(() => single(req, ctx), ctx),
    readManyChart: (req, ctx) => columns(() => multi(req, ctx), ctx),
    readChartJson: (req, ctx) => rest(() => single(req, ctx), ctx),
    readManyChartJson: (req, ctx) => rest(() => multi(req, ctx), ctx),
  };
}
