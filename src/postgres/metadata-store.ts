// Datasets and time series in PostgreSQL, shared by every replica (D40).
import type { Sql } from "./database.js";
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

export class PostgresMetadataStore implements MetadataStore {
  constructor(private readonly sql: Sql) {}

  async createDataset(d: DatasetRecord): Promise<boolean> {
    const r = datasetRow(d);
    const rows = await this.sql`
      INSERT INTO datasets (id, project, items, properties, metadata) VALUES (${r.id}, ${r.project}, ${r.items}, ${r.properties}, ${r.metadata})
      ON CONFLICT (id) DO NOTHING RETURNING 1`;
    return rows.length === 1;
  }

  async getDataset(id: string): Promise<DatasetRecord | undefined> {
    const r = (await this.sql<DatasetRow[]>`SELECT * FROM datasets WHERE id = ${id}`).at(0);
    return r && datasetOf(r);
  }

  async deleteDataset(id: string): Promise<boolean> {
    return (await this.sql`DELETE FROM datasets WHERE id = ${id}`).count > 0;
  }

  async createSeries(s: Omit<SeriesRecord, "sid">): Promise<SeriesRecord | undefined> {
    const r = seriesRow(s);
    const row = (
      await this.sql<{ sid: number }[]>`
      INSERT INTO time_series (id, dataset_id, item, properties, data_fields) VALUES (${r.id}, ${r.dataset_id}, ${r.item}, ${r.properties}, ${r.data_fields})
      ON CONFLICT (id) DO NOTHING RETURNING sid`
    ).at(0);
    return row && { ...s, sid: row.sid };
  }

  async getSeries(datasetId: string, id: string): Promise<SeriesRecord | undefined> {
    const r = (await this.sql<SeriesRow[]>`SELECT * FROM time_series WHERE dataset_id = ${datasetId} AND id = ${id}`).at(0);
    return r && seriesOf(r);
  }

  async listSeries(datasetId: string): Promise<SeriesRecord[]> {
    return (await this.sql<SeriesRow[]>`SELECT * FROM time_series WHERE dataset_id = ${datasetId} ORDER BY id COLLATE "C"`).map(seriesOf);
  }

  async getSeriesMany(datasetId: string, ids: readonly string[]): Promise<SeriesRecord[]> {
    return (
      await this.sql<SeriesRow[]>`SELECT * FROM time_series WHERE dataset_id = ${datasetId} AND id = ANY(${ids as string[]}::text[])`
    ).map(seriesOf);
  }

  async deleteSeries(datasetId: string, id: string): Promise<boolean> {
    return (await this.sql`DELETE FROM time_series WHERE dataset_id = ${datasetId} AND id = ${id}`).count > 0;
  }
}
