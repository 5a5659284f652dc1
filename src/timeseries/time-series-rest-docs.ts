// What the OpenAPI document (D41) says of the time series routes beyond their
// descriptors, taken from the rules that enforce it (D59): the D14 headers,
// the timestamps of ranges (D24), page sizes and chart widths (clamped, never
// refused), the rows of uploads and the JSON of the streamed values reads,
// and an example of each values operation.
import type { DescField } from "@bufbuild/protobuf";
import { TimeSeriesService } from "../gen/meridian/timeseries/v1/time_series_pb.js";
import type { OperationExamples, Schema } from "../transport/rest/openapi.js";
import type { ServiceRegistry } from "../transport/service-registry.js";
import { CHART_WIDTH } from "./chart-reads.js";
import { QUERY_FORM } from "../kernel/timestamps.js";
import { VALUE_JSON_SCHEMAS } from "./value-json.js";
import { COLUMNAR_MEDIA_TYPES } from "./columnar/formats.js";
import { PAGE } from "./value-reads.js";
import { MAX_SERIES_A_WRITE } from "./value-uploads.js";
import { DATA_TYPES } from "./value-rows.js";
import { CONDITION_TYPE, OPERATORS } from "./query-conditions.js";

const n = (x: number) => x.toLocaleString("en");

const STREAMED = `Streamed as it is read. Without api-version 3, the whole range; with it, one page of \`limit\` rows (${n(PAGE.min)}..${n(PAGE.max)}, default ${n(PAGE.default)}) and a \`cursor\` for the next.`;

const CHART = `Of each of \`width\` equal time buckets over [from, to] (${n(CHART_WIDTH.min)}..${n(CHART_WIDTH.max)}, default ${n(CHART_WIDTH.default)}, clamped), the stored rows holding the first, last, minimum and maximum of every Single and Double field (M4: a line through them is pixel for pixel the line through all rows), in time order without repeats, in the row layout of the values read. The row at second t falls in bucket floor((t - from) * width / (to - from + 1)); of equal values the earliest row; missing values and NaN are skipped.`;

const PKG = "meridian.timeseries.v1";
/** D23: dataset and series ids are GUIDs (kernel/ids.ts), in any case; answers write them in lower case. */
const GUID: Schema = { type: "string", format: "uuid" };
const CREATED_ID = { format: "uuid", description: "A GUID; absent on create, the server makes one." };
const RANGED = new Set(["ReadValuesRequest", "ReadManyValuesRequest", "ReadChartRequest", "ReadManyChartRequest", "DeleteValuesRequest"]);

/**
 * Page sizes and chart widths are clamped into their range, never refused, so
 * their schemas have no minimum or maximum: either would make a request the
 * server answers look invalid. The range is in the description.
 */
const FACTS: Record<string, Schema> = {
  "ReadValuesRequest.limit": {
    default: PAGE.default,
    description: `api-version 3 only: rows per page, clamped to ${n(PAGE.min)}..${n(PAGE.max)} (any value is accepted).`,
  },
  "ReadManyValuesRequest.limit": {
    default: PAGE.default,
    description: `api-version 3 only: values per page, clamped to ${n(PAGE.min)}..${n(PAGE.max)} (any value is accepted); a page also ends at ${n(PAGE.entries)} series entries.`,
  },
  "ReadChartRequest.width": {
    default: CHART_WIDTH.default,
    description: `Pixel columns: time buckets over [from, to], clamped to ${n(CHART_WIDTH.min)}..${n(CHART_WIDTH.max)} (any value is accepted).`,
  },
  "ReadManyChartRequest.width": {
    default: CHART_WIDTH.default,
    description: `Pixel columns: time buckets over [from, to], clamped to ${n(CHART_WIDTH.min)}..${n(CHART_WIDTH.max)} (any value is accepted).`,
  },
  "ReadManyValuesRequest.time_series_ids": {
    items: GUID,
    minItems: 1,
    uniqueItems: true,
    description: "The series to read, in the order of the answer: at least one, none twice, each of the dataset.",
  },
  "ReadManyChartRequest.time_series_ids": {
    items: GUID,
    minItems: 1,
    uniqueItems: true,
    description: "The series to read, in the order of the answer: at least one, none twice, each of the dataset.",
  },
  "UploadValuesRequest.data": {
    ...VALUE_JSON_SCHEMAS.uploadRows,
    description: "Rows to store, replacing stored rows of the same timestamps.",
  },
  "SeriesValues.data": {
    ...VALUE_JSON_SCHEMAS.uploadRows,
    description: "Rows of this series, in its own field layout, replacing stored rows of the same timestamps.",
  },
  "UploadManyValuesRequest.series": {
    maxItems: MAX_SERIES_A_WRITE,
    description: `The series written and their rows: all of the request is stored or none of it. A series may come more than once; of equal timestamps the later row wins. At most ${n(MAX_SERIES_A_WRITE)} entries a request.`,
  },
  "DataField.data_type": { enum: Object.keys(DATA_TYPES) },
  "DataField.flags": { description: "Present on Flag fields only (and there always, an empty list included)." },
  "Dataset.id": CREATED_ID,
  "TimeSeries.id": CREATED_ID,
  "QueryCondition.type": { enum: [CONDITION_TYPE], description: "The kind of condition; case is ignored." },
  "QueryCondition.name": {
    description: "Item (the item's name, compared as text), or a property the dataset declares (compared as a number).",
  },
  "QueryCondition.operator": {
    enum: [...OPERATORS],
    description: "Case is ignored. Contains and StartsWith apply to Item only.",
  },
  "QueryCondition.value": { description: "The value compared with: text for Item, a number for a property. Absent: empty." },
};

function fieldFacts(f: DescField): Schema | undefined {
  const message = f.parent.typeName;
  if (!message.startsWith(`${PKG}.`)) return undefined;
  const local = message.slice(PKG.length + 1);
  // D24: not RFC 3339 (no offset, and the colons of the time may be left out), hence a pattern rather than format: date-time.
  if (RANGED.has(local) && (f.name === "from" || f.name === "to")) {
    return {
      pattern: QUERY_FORM.source,
      description: `${f.name === "from" ? "First" : "Last"} second of the range, inclusive, UTC: yyyy-MM-ddTHHmmss or yyyy-MM-ddTHH:mm:ss, optionally with Z. Absent: the ${f.name === "from" ? "first" : "last"} of the series.`,
    };
  }
  if (f.name === "dataset_id" || f.name === "time_series_id") return { format: "uuid" };
  return FACTS[`${local}.${f.name}`];
}

// Examples: a series with a Single field and a Flag field.
const DATASET = "0f8e2a64-7c1d-4b9e-a3f5-2d6c8b1e9a70";
const SERIES = "5b3c9d12-8e4f-4a6b-b7c1-9d2e0f3a4b58";
const OTHER = "c7a1e5f3-2b9d-4c8e-a6f0-1e3d5b7c9a24";
const ROWS = [
  ["2026-01-01T00:00:00", 12.5, 0],
  ["2026-01-01T00:01:00", 12.625, 1],
  ["2026-01-01T00:02:00", null, 0],
];
const path = {
  dataset_id: DATASET,
  time_series_id: SERIES,
  "svc-service-id": "timeseries",
  "svc-project-id": "hydrology",
  "svc-dataset-id": DATASET,
};
const RANGE = { from: "2026-01-01T00:00:00", to: "2026-01-01T23:59:59" };
const EXAMPLES: Record<string, OperationExamples> = {
  UploadValues: { parameters: path, request: { data: ROWS }, response: { count: ROWS.length } },
  UploadManyValues: {
    parameters: path,
    request: {
      series: [
        { timeSeriesId: SERIES, data: ROWS },
        { timeSeriesId: OTHER, data: [["2026-01-01T00:00:00", 3.25, 0]] },
      ],
    },
    response: { count: ROWS.length + 1, series: 2 },
  },
  ReadValuesJson: { parameters: { ...path, ...RANGE }, response: { data: ROWS } },
  ReadManyValuesJson: {
    parameters: { ...path, ...RANGE },
    request: [SERIES, OTHER],
    response: { data: [ROWS, [["2026-01-01T00:00:00", 3.25, 0]]] },
  },
  ReadChartJson: { parameters: { ...path, ...RANGE, width: 800 }, response: { data: [ROWS[0], ROWS[1]] } },
  ReadManyChartJson: {
    parameters: { ...path, ...RANGE, width: 800 },
    request: [SERIES, OTHER],
    response: { data: [[ROWS[0], ROWS[1]], []] },
  },
  DeleteValues: { parameters: { ...path, from: "2026-01-01T000000", to: "2026-01-01T000200Z" } },
};

/** The reads whose answer's format Accept chooses. */
const FORMAT_READS = new Set(["ReadValuesJson", "ReadManyValuesJson", "ReadChartJson", "ReadManyChartJson"]);
// The columnar formats are content types of the 200 too, so that a generated client asks for them and takes
// bytes (orval, openapi-python-client); openapi-fetch then types an answer as the union of the JSON and a
// string, unless the client is made for JSON alone (createClient<paths, `${string}/json`>).
const FORMATS_TEXT = `The format is chosen by Accept: JSON (also for text/plain, */* or none), or ${COLUMNAR_MEDIA_TYPES.join(" or ")} (binary; Arrow: a timestamp column, timestamp[ms, UTC], then one column per data field, one stream per series; Parquet: the same columns in one file, zstd, several series with a time_series_id column first, a page's cursor in the key-value metadata as meridian:cursor).`;

export function documentTimeSeriesRest(registry: ServiceRegistry): void {
  registry.documentRest(TimeSeriesService, {
    tag: {
      name: "Time series",
      description: "Datasets, their time series and the series' values: uploaded as rows, read whole or in pages, and read for charts.",
    },
    fields: fieldFacts,
    // What a query condition must carry: the server refuses one without (D29).
    required: { [`${PKG}.QueryCondition`]: ["type", "name", "operator"] },
    // D52 (time-series-json-shapes.ts): flags only on Flag fields.
    sometimesOmitted: { [`${PKG}.DataField`]: ["flags"] },
    examples: EXAMPLES,
    responses: (route): Record<string, { description: string; problem?: boolean }> =>
      FORMAT_READS.has(route.method.name)
        ? { "406": { description: "Accept allows none of the media types the answer comes in (NOT_ACCEPTABLE)", problem: true } }
        : {},
    headers: (route) => [
      { name: "svc-service-id", in: "header", required: true, schema: { type: "string", enum: ["timeseries"] } },
      { name: "svc-project-id", in: "header", required: true, description: "the project the caller works in", schema: { type: "string" } },
      ...(route.template.variables.some((v) => v.fieldPath === "dataset_id")
        ? [
            {
              name: "svc-dataset-id",
              in: "header" as const,
              required: true,
              description: "the dataset of the path, again",
              schema: { type: "string" },
            },
          ]
        : []),
    ],
    streamedJson: {
      ReadValuesJson: {
        binary: COLUMNAR_MEDIA_TYPES,
        schema: VALUE_JSON_SCHEMAS.single,
        description: `Rows of the series in time order. ${STREAMED} ${FORMATS_TEXT}`,
      },
      ReadManyValuesJson: {
        binary: COLUMNAR_MEDIA_TYPES,
        schema: VALUE_JSON_SCHEMAS.multi,
        description: `Per series in the order asked, its rows in time order (paged: \`{timeSeriesId, values}\` entries). ${STREAMED} ${FORMATS_TEXT}`,
      },
      ReadChartJson: {
        binary: COLUMNAR_MEDIA_TYPES,
        schema: VALUE_JSON_SCHEMAS.single,
        description: `${CHART} Without from or to, the series' first and last timestamps. ${FORMATS_TEXT}`,
      },
      ReadManyChartJson: {
        binary: COLUMNAR_MEDIA_TYPES,
        schema: VALUE_JSON_SCHEMAS.multi,
        description: `${CHART} One row array per id, in the order asked; without from or to, each series' own first and last timestamps. ${FORMATS_TEXT}`,
      },
    },
  });
}
