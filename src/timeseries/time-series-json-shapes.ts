// How time series messages read in REST JSON beyond proto3 JSON (D52): a data
// field carries `flags` only when it is a Flag field (the spec: "flags is
// present for Flag fields"), and then always, an empty list included.
import type { JsonObject } from "@bufbuild/protobuf";
import { DataFieldSchema } from "../gen/meridian/timeseries/v1/time_series_pb.js";
import type { ServiceRegistry } from "../transport/service-registry.js";

export function addTimeSeriesJsonShapes(registry: ServiceRegistry): void {
  registry.shapeJson(DataFieldSchema, (json: JsonObject) => {
    if (json.dataType === "Flag") json.flags ??= [];
    else delete json.flags;
  });
}
