// Datasets and time series, whichever database holds them (D40). Nested parts
// (items, properties, data fields, metadata) are stored as the JSON the API
// shows, since they are read and written whole and never queried by SQL.
import type { Maybe } from "./blocks/block-store.js";
import { finiteProperties } from "./finite-numbers.js";

export interface DatasetRecord {
  id: string;
  project: string;
  items: unknown[];
  properties: { name: string; dataType: string }[];
  metadata: Record<string, unknown>;
}

export interface SeriesRecord {
  /** Internal key of the series' blocks. */
  sid: number;
  id: string;
  datasetId: string;
  item: Record<string, unknown>;
  properties: Record<string, number>;
  dataFields: { name: string; dataType: string; flags?: unknown[] }[];
}

export interface MetadataStore {
  /** Stores a dataset; false when its id is taken. */
  createDataset(d: DatasetRecord): Maybe<boolean>;
  getDataset(id: string): Maybe<DatasetRecord | undefined>;
  /** Removes the dataset with its series and their values. */
  deleteDataset(id: string): Maybe<boolean>;
  /** Stores a series (ids are unique across datasets); undefined when its id is taken. */
  createSeries(s: Omit<SeriesRecord, "sid">): Maybe<SeriesRecord | undefined>;
  getSeries(datasetId: string, id: string): Maybe<SeriesRecord | undefined>;
  listSeries(datasetId: string): Maybe<SeriesRecord[]>;
  /** Those of the named series that are the dataset's, in any order (D68: one query for a many-series write). */
  getSeriesMany(datasetId: string, ids: readonly string[]): Maybe<SeriesRecord[]>;
  deleteSeries(datasetId: string, id: string): Maybe<boolean>;
}

/** A series row as both databases store it. */
export interface SeriesRow {
  sid: number;
  id: string;
  dataset_id: string;
  item: string;
  properties: string;
  data_fields: string;
}

export interface DatasetRow {
  id: string;
  project: string;
  items: string;
  properties: string;
  metadata: string;
}

export const datasetRow = (d: DatasetRecord): DatasetRow => ({
  id: d.id,
  project: d.project,
  items: JSON.stringify(d.items),
  properties: JSON.stringify(d.properties),
  metadata: JSON.stringify(d.metadata),
});

// The JSON that datasetRow and seriesRow wrote from these same fields.
export const datasetOf = (r: DatasetRow): DatasetRecord => ({
  id: r.id,
  project: r.project,
  items: JSON.parse(r.items) as DatasetRecord["items"],
  properties: JSON.parse(r.properties) as DatasetRecord["properties"],
  metadata: JSON.parse(r.metadata) as DatasetRecord["metadata"],
});

export const seriesRow = (s: Omit<SeriesRecord, "sid">): Omit<SeriesRow, "sid"> => ({
  id: s.id,
  dataset_id: s.datasetId,
  item: JSON.stringify(s.item),
  properties: JSON.stringify(s.properties),
  data_fields: JSON.stringify(s.dataFields),
});

export const seriesOf = (r: SeriesRow): SeriesRecord => ({
  sid: r.sid,
  id: r.id,
  datasetId: r.dataset_id,
  item: JSON.parse(r.item) as SeriesRecord["item"],
  properties: finiteProperties(JSON.parse(r.properties) as Record<string, unknown>),
  dataFields: JSON.parse(r.data_fields) as SeriesRecord["dataFields"],
});
