// What the OpenAPI document (D41) says of the message routes beyond their
// descriptors: the conditional requests of D47.
import { FeatureStatusService } from "../gen/meridian/featurestatus/v1/feature_status_pb.js";
import type { RestDocs } from "../transport/rest/openapi.js";
import type { ServiceRegistry } from "../transport/service-registry.js";

export function documentFeatureStatusRest(registry: ServiceRegistry): void {
  const writes = (method: string) => method === "PATCH" || method === "DELETE";
  registry.documentRest(FeatureStatusService, {
    headers: (route) =>
      writes(route.httpMethod)
        ? [{ name: "if-match", in: "header", description: "the ETag of the message as last read: the write is refused with 412 if it changed since (D47)", schema: { type: "string" } }]
        : route.httpMethod === "GET"
          ? [{ name: "if-none-match", in: "header", description: "the ETag of a listing already held: 304 while it is still the answer (D47)", schema: { type: "string" } }]
          : [],
    responses: (route): ReturnType<NonNullable<RestDocs["responses"]>> =>
      writes(route.httpMethod)
        ? { "412": { description: "the message changed since the ETag of If-Match; its current ETag is in the answer's ETag header", problem: true } }
        : route.httpMethod === "GET"
          ? { "304": { description: "the listing is still the one of If-None-Match" } }
          : {},
  });
}
