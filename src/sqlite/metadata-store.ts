// Datasets and time series in SQLite (the record shapes are in metadata-store.ts).
import { param, type Db } from "./database.js";
import {
  datasetOf,
  datasetRow,
  seriesOf,
  seriesRow,
  type DatasetRecord,
  type DatasetRow,
  type MetadataStore,
  type SeriesRecord,
  type SeriesRow,
} from "../timeseries/metadata-store.js";

export class SqliteMetadataStore implements MetadataStore {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      insertDataset: db.prepare(
        "INSERT INTO datasets (id, project, items, properties, metadata) VALUES (@id, @project, @items, @properties, @metadata)",
      ),
      getDataset: db.prepare<[string], DatasetRow>("SELECT * FROM datasets WHERE id = ?"),
      deleteDataset: db.prepare<[string]>("DELETE FROM datasets WHERE id = ?"),
      insertSeries: db.prepare(
        "INSERT INTO time_series (id, dataset_id, item, properties, data_fields) VALUES (@id, @dataset_id, @item, @properties, @data_fields) RETURNING sid",
      ),
      getSeries: db.prepare<[string, string], SeriesRow>("SELECT * FROM time_series WHERE dataset_id = ? AND id = ?"),
      listSeries: db.prepare<{ datasetId: string }, SeriesRow>(
        `SELECT * FROM time_series WHERE dataset_id = ${param("datasetId")} ORDER BY id`,
      ),
      getSeriesMany: db.prepare<{ datasetId: string; ids: string }, SeriesRow>(
        `SELECT * FROM time_series WHERE dataset_id = ${param("datasetId")} AND id IN (SELECT value FROM json_each(@ids))`,
      ),
      deleteSeries: db.prepare<[string, string]>("DELETE FROM time_series WHERE dataset_id = ? AND id = ?"),
    };
  }

  createDataset(d: DatasetRecord): boolean {
    return unlessTaken(() => (this.stmts.insertDataset.run(datasetRow(d)), true)) ?? false;
  }

  getDataset(id: string): DatasetRecord | undefined {
    const r = this.stmts.getDataset.get(id);
    return r && datasetOf(r);
  }

  deleteDataset(id: string): boolean {
    return this.stmts.deleteDataset.run(id).changes > 0;
  }

  createSeries(s: Omit<SeriesRecord, "sid">): SeriesRecord | undefined {
    return unlessTaken(() => {
      const { sid } = this.stmts.insertSeries.get(seriesRow(s)) as { sid: number };
      return { ...s, sid };
    });
  }

  getSeries(datasetId: string, id: string): SeriesRecord | undefined {
    const r = this.stmts.getSeries.get(datasetId, id);
    return r && seriesOf(r);
  }

  listSeries(datasetId: string): SeriesRecord[] {
    return this.stmts.listSeries.all({ datasetId }).map(seriesOf);
  }

  getSeriesMany(datasetId: string, ids: readonly string[]): SeriesRecord[] {
    return this.stmts.getSeriesMany.all({ datasetId, ids: JSON.stringify(ids) }).map(seriesOf);
  }

  deleteSeries(datasetId: string, id: string): boolean {
    return this.stmts.deleteSeries.run(datasetId, id).changes > 0;
  }
}

/** Runs an insert; undefined when the id is taken (the table's unique constraint). */
function unlessTaken<T>(insert: () => T): T | undefined {
  try {
    return insert();
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === "SQLITE_CONSTRAINT_PRIMARYKEY" || code === "SQLITE_CONSTRAINT_UNIQUE") return undefined;
    throw e;
  }
}
