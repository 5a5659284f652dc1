// Part B: metadata, D29 queries, and the value reads (value-reads.ts,
// chart-reads.ts) and writes (value-uploads.ts), behind one D14 check of
// project and dataset.
import { randomUUID } from "node:crypto";
import { create, fromJson, toJson, type JsonObject } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import {
  DatasetSchema,
  TimeSeriesListSchema,
  TimeSeriesSchema,
  type Dataset,
  type TimeSeries,
  type TimeSeriesService,
} from "../gen/meridian/timeseries/v1/time_series_pb.js";
import { failure, notFound, ViolationList } from "../kernel/errors.js";
import type { BlockStore } from "./blocks/block-store.js";
import { authorize } from "./access.js";
import { guid } from "../kernel/ids.js";
import { compileConditions } from "./query-conditions.js";
import { checkFiniteProperties, checkFiniteStruct } from "./finite-numbers.js";
import type { DatasetRecord, MetadataStore, SeriesRecord } from "./metadata-store.js";
import type { CursorSeal } from "../kernel/cursor-seal.js";
import { rangeOf } from "./value-range.js";
import { valueReads } from "./value-reads.js";
import { chartReads } from "./chart-reads.js";
import { BlockCache } from "./blocks/block-cache.js";
import { DATA_TYPES, kindsOf } from "./value-rows.js";
import { valueUploads } from "./value-uploads.js";

export interface TimeSeriesDeps {
  metadata: MetadataStore;
  blocks: BlockStore;
  /** Seals value cursors (D27). */
  cursors: CursorSeal;
  /** Told how many rows each read step took (the metrics, D43). */
  onRows?: (rows: number) => void;
  /** Memory for hot blocks and their summaries (MERIDIAN_BLOCK_CACHE_MB; 0 keeps none). */
  blockCacheBytes?: number;
  /** Told of the block cache's hits, misses and evictions, and of the bytes it holds (the metrics, D43). */
  onBlockCache?: { event: (event: "hit" | "miss" | "eviction") => void; bytes: (bytes: number) => void };
}

/** MERIDIAN_BLOCK_CACHE_MB's default, for callers without settings. */
export const BLOCK_CACHE_BYTES = 256 * 1024 * 1024;

export function timeSeriesService({
  metadata,
  blocks,
  cursors,
  onRows,
  blockCacheBytes = BLOCK_CACHE_BYTES,
  onBlockCache,
}: TimeSeriesDeps): ServiceImpl<typeof TimeSeriesService> {
  const charts = new BlockCache(blocks, blockCacheBytes, onBlockCache?.event, onBlockCache?.bytes);
  /** The dataset of the path, checked against D14; another project's is a 404. */
  const datasetFor = async (ctx: HandlerContext, access: "read" | "write", datasetId: string): Promise<DatasetRecord> => {
    const project = authorize(ctx, access, datasetId);
    const id = guid(datasetId, "datasetId");
    const d = await metadata.getDataset(id);
    if (d?.project !== project) throw notFound(`no dataset ${id}`, "DATASET_NOT_FOUND");
    return d;
  };
  /** A series of the dataset, by an id as sent in `field`; another dataset's is a 404. */
  const seriesIn = async (d: DatasetRecord, seriesId: string, field: string): Promise<SeriesRecord> => {
    const id = guid(seriesId, field);
    const s = await metadata.getSeries(d.id, id);
    if (!s) throw notFound(`no time series ${id} in dataset ${d.id}`, "TIME_SERIES_NOT_FOUND");
    return s;
  };
  const seriesFor = async (ctx: HandlerContext, access: "read" | "write", datasetId: string, seriesId: string): Promise<SeriesRecord> =>
    seriesIn(await datasetFor(ctx, access, datasetId), seriesId, "timeSeriesId");

  return {
    ...valueReads({ blocks, cursors, datasetFor, seriesIn, onRows }),
    ...chartReads({ blocks, charts, cursors, datasetFor, seriesIn, onRows }),
    ...valueUploads({ blocks, metadata, datasetFor, seriesIn }),

    getDataset: async (req, ctx) => toDataset(await datasetFor(ctx, "read", req.datasetId)),

    createDataset: async (req, ctx) => {
      const project = authorize(ctx, "write");
      const d = req.dataset ?? create(DatasetSchema);
      const v = new ViolationList();
      const id = d.id === "" ? randomUUID() : guid(d.id, "id");
      const names = new Set<string>();
      d.timeSeriesProperties.forEach((p, i) => {
        if (p.name === "") v.add(`timeSeriesProperties[${i}].name`, "is required");
        else if (p.name === "Item") v.add(`timeSeriesProperties[${i}].name`, '"Item" is reserved for the item name (D29)');
        else if (names.has(p.name)) v.add(`timeSeriesProperties[${i}].name`, "is declared twice");
        names.add(p.name);
        if (p.dataType !== "Double") v.add(`timeSeriesProperties[${i}].dataType`, 'must be "Double"');
      });
      checkFiniteStruct(d.metadata, "metadata", v);
      v.throwIfAny();
      const json = toJson(DatasetSchema, d, { alwaysEmitImplicit: true }) as JsonObject;
      const record: DatasetRecord = {
        id,
        project,
        items: json.items as unknown[],
        properties: json.timeSeriesProperties as DatasetRecord["properties"],
        metadata: (json.metadata ?? {}) as Record<string, unknown>,
      };
      if (!(await metadata.createDataset(record))) throw failure("DATASET_EXISTS", `dataset ${id} exists`);
      return toDataset(record);
    },

    deleteDataset: async (req, ctx) => {
      await metadata.deleteDataset((await datasetFor(ctx, "write", req.datasetId)).id);
      return {};
    },

    listTimeSeries: async (req, ctx) => {
      const d = await datasetFor(ctx, "read", req.datasetId);
      return create(TimeSeriesListSchema, { data: (await metadata.listSeries(d.id)).map(toSeries) });
    },

    queryTimeSeries: async (req, ctx) => {
      const d = await datasetFor(ctx, "read", req.datasetId);
      const matches = compileConditions(req.conditions, new Set(d.properties.map((p) => p.name)));
      return create(TimeSeriesListSchema, { data: (await metadata.listSeries(d.id)).filter(matches).map(toSeries) });
    },

    getTimeSeries: async (req, ctx) => toSeries(await seriesFor(ctx, "read", req.datasetId, req.timeSeriesId)),

    createTimeSeries: async (req, ctx) => {
      const d = await datasetFor(ctx, "write", req.datasetId);
      const s = req.timeSeries ?? create(TimeSeriesSchema);
      const v = new ViolationList();
      const id = s.id === "" ? randomUUID() : guid(s.id, "id");
      if (!s.item) v.add("item", "is required");
      const declared = new Set(d.properties.map((p) => p.name));
      for (const name of Object.keys(s.properties))
        if (!declared.has(name)) v.add(`properties.${name}`, "is not declared in the dataset's timeSeriesProperties");
      checkFiniteProperties(s.properties, v);
      if (s.dataFields.length === 0) v.add("dataFields", "must name at least one data field");
      if (s.dataFields.length > 255) v.add("dataFields", "may hold at most 255 fields");
      const names = new Set<string>();
      s.dataFields.forEach((f, i) => {
        if (f.name === "" || names.has(f.name)) v.add(`dataFields[${i}].name`, "must be a non-empty name, unique in the series");
        names.add(f.name);
        if (!(f.dataType in DATA_TYPES)) v.add(`dataFields[${i}].dataType`, "must be Single, Double or Flag");
        if (f.flags.length > 0 && f.dataType !== "Flag") v.add(`dataFields[${i}].flags`, "only Flag fields have flags");
      });
      v.throwIfAny();
      const json = toJson(TimeSeriesSchema, s, { alwaysEmitImplicit: true }) as JsonObject;
      const record = {
        id,
        datasetId: d.id,
        item: json.item as Record<string, unknown>,
        properties: s.properties,
        dataFields: json.dataFields as SeriesRecord["dataFields"],
      };
      // Series ids are unique across datasets, which the table's constraint enforces.
      const created = await metadata.createSeries(record);
      if (!created) throw failure("TIME_SERIES_EXISTS", `time series ${id} exists`);
      return toSeries(created);
    },

    deleteTimeSeries: async (req, ctx) => {
      const s = await seriesFor(ctx, "write", req.datasetId, req.timeSeriesId);
      await metadata.deleteSeries(s.datasetId, s.id);
      return {};
    },

    deleteValues: async (req, ctx) => {
      const s = await seriesFor(ctx, "write", req.datasetId, req.timeSeriesId);
      const [from, to] = rangeOf(req.from, req.to);
      await blocks.deleteRange(s.sid, kindsOf(s.dataFields), from, to);
      return {};
    },
  };
}

function toDataset(d: DatasetRecord): Dataset {
  return fromJson(DatasetSchema, { id: d.id, items: d.items, timeSeriesProperties: d.properties, metadata: d.metadata } as JsonObject);
}

function toSeries(s: SeriesRecord): TimeSeries {
  return fromJson(TimeSeriesSchema, { id: s.id, item: s.item, properties: s.properties, dataFields: s.dataFields } as JsonObject);
}
