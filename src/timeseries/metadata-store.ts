// Datasets and time series in SQLite. Nested parts (items, properties, data
// fields, metadata) are stored as the JSON the API shows, since they are read
// and written whole and never queried by SQL.
import type { Db } from "../storage/database.js";
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

interface SeriesRow {
  sid: number;
  id: string;
  dataset_id: string;
  item: string;
  properties: string;
  data_fields: string;
}

export class MetadataStore {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      insertDataset: db.prepare("INSERT INTO datasets (id, project, items, properties, metadata) VALUES (@id, @project, @items, @properties, @metadata)"),
      getDataset: db.prepare<[string], { id: string; project: string; items: string; properties: string; metadata: string }>("SELECT * FROM datasets WHERE id = ?"),
      deleteDataset: db.prepare<[string]>("DELETE FROM datasets WHERE id = ?"),
      insertSeries: db.prepare(
        "INSERT INTO time_series (id, dataset_id, item, properties, data_fields) VALUES (@id, @dataset_id, @item, @properties, @data_fields) RETURNING sid",
      ),
      getSeries: db.prepare<[string, string], SeriesRow>("SELECT * FROM time_series WHERE dataset_id = ? AND id = ?"),
      listSeries: db.prepare<[string], SeriesRow>("SELECT * FROM time_series WHERE dataset_id = ? ORDER BY id"),
      deleteSeries: db.prepare<[string, string]>("DELETE FROM time_series WHERE dataset_id = ? AND id = ?"),
    };
  }

  createDataset(d: DatasetRecord): void {
    this.stmts.insertDataset.run({ id: d.id, project: d.project, items: JSON.stringify(d.items), properties: JSON.stringify(d.properties), metadata: JSON.stringify(d.metadata) });
  }

  getDataset(id: string): DatasetRecord | undefined {
    const r = this.stmts.getDataset.get(id);
    return r && { id: r.id, project: r.project, items: JSON.parse(r.items), properties: JSON.parse(r.properties), metadata: JSON.parse(r.metadata) };
  }

  /** Removes the dataset with its series and their values. */
  deleteDataset(id: string): boolean {
    return this.stmts.deleteDataset.run(id).changes > 0;
  }

  createSeries(s: Omit<SeriesRecord, "sid">): SeriesRecord {
    const { sid } = this.stmts.insertSeries.get({
      id: s.id,
      dataset_id: s.datasetId,
      item: JSON.stringify(s.item),
      properties: JSON.stringify(s.properties),
      data_fields: JSON.stringify(s.dataFields),
    }) as { sid: number };
    return { ...s, sid };
  }

  getSeries(datasetId: string, id: string): SeriesRecord | undefined {
    const r = this.stmts.getSeries.get(datasetId, id);
    return r && seriesOf(r);
  }

  listSeries(datasetId: string): SeriesRecord[] {
    return this.stmts.listSeries.all(datasetId).map(seriesOf);
  }

  deleteSeries(datasetId: string, id: string): boolean {
    return this.stmts.deleteSeries.run(datasetId, id).changes > 0;
  }
}

function seriesOf(r: SeriesRow): SeriesRecord {
  return { sid: r.sid, id: r.id, datasetId: r.dataset_id, item: JSON.parse(r.item), properties: finiteProperties(JSON.parse(r.properties)), dataFields: JSON.parse(r.data_fields) };
}
