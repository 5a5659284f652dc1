// What the OpenAPI document (D41) says of the time series routes beyond their
// descriptors: the D14 headers, and the JSON of the streamed values reads.
import { TimeSeriesService } from "../gen/meridian/timeseries/v1/time_series_pb.js";
import type { ServiceRegistry } from "../transport/service-registry.js";
import { VALUE_JSON_SCHEMAS } from "./value-json.js";

const STREAMED =
  "Streamed as it is read (D28). Without api-version 3, the whole range; with it, one page of `limit` rows (16,536..5,000,000, default 100,000) and a `cursor` for the next (D26, D27).";

const CHART =
  "D50: of each of `width` equal time buckets over [from, to] (1..10,000, default 1,000, clamped), the stored rows holding the first, last, minimum and maximum of every Single and Double field (M4: a line through them is pixel for pixel the line through all rows), in time order without repeats, in the row layout of the values read. The row at second t falls in bucket floor((t - from) * width / (to - from + 1)); of equal values the earliest row; missing values and NaN are skipped.";

export function documentTimeSeriesRest(registry: ServiceRegistry): void {
  registry.documentRest(TimeSeriesService, {
    headers: (route) => [
      { name: "svc-service-id", in: "header", required: true, schema: { type: "string", enum: ["timeseries"] } },
      { name: "svc-project-id", in: "header", required: true, description: "the project the caller works in (D14)", schema: { type: "string" } },
      ...(route.template.variables.some((v) => v.fieldPath === "dataset_id")
        ? [{ name: "svc-dataset-id", in: "header" as const, required: true, description: "the dataset of the path, again (D14)", schema: { type: "string" } }]
        : []),
    ],
    streamedJson: {
      ReadValuesJson: { schema: VALUE_JSON_SCHEMAS.single, description: `Rows of the series in time order. ${STREAMED}` },
      ReadManyValuesJson: { schema: VALUE_JSON_SCHEMAS.multi, description: `Per series in the order asked, its rows in time order (paged: \`{timeSeriesId, values}\` entries). ${STREAMED}` },
      ReadChartJson: { schema: VALUE_JSON_SCHEMAS.single, description: `${CHART} Without from or to, the series' first and last timestamps.` },
      ReadManyChartJson: { schema: VALUE_JSON_SCHEMAS.multi, description: `${CHART} One row array per id, in the order asked; without from or to, each series' own first and last timestamps.` },
    },
  });
}
