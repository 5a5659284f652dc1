// What the OpenAPI document (D41) says of the message routes beyond their
// descriptors: the conditional requests of D47 and the event streams of D46.
import { FeatureStatusService } from "../gen/meridian/featurestatus/v1/feature_status_pb.js";
import type { RestDocs } from "../transport/rest/openapi.js";
import type { ServiceRegistry } from "../transport/service-registry.js";

const SSE =
  "Server-Sent Events (D46): `event: messages` with `data: {\"data\": [message...]}`, the active messages the caller may see, at once and again whenever that set changes (by a write on any replica, or by the clock); each event's id names its set; a `: heartbeat` comment when quiet. Beyond MERIDIAN_MAX_WATCHERS streams, 503.";

export function documentFeatureStatusRest(registry: ServiceRegistry): void {
  const writes = (method: string) => method === "PATCH" || method === "DELETE";
  const LISTINGS = new Set(["ListFeatureMessages", "ListGlobalMessages"]); // the answers that carry an ETag
  const CREATES = new Set(["CreateFeatureMessage", "CreateGlobalMessage"]);
  registry.documentRest(FeatureStatusService, {
    headers: (route) =>
      writes(route.httpMethod)
        ? [{ name: "if-match", in: "header", description: "the ETag of the message as last read: the write is refused with 412 if it changed since (D47)", schema: { type: "string" } }]
        : route.streamsHttpBody
          ? [{ name: "last-event-id", in: "header", description: "the id of the last event received: no first event while the set is still that one (D46)", schema: { type: "string" } }]
          : LISTINGS.has(route.method.name)
            ? [{ name: "if-none-match", in: "header", description: "the ETag of a listing already held: 304 while it is still the answer (D47)", schema: { type: "string" } }]
            : [],
    responses: (route): ReturnType<NonNullable<RestDocs["responses"]>> =>
      writes(route.httpMethod)
        ? { "412": { description: "the message changed since the ETag of If-Match; its current ETag is in the answer's ETag header", problem: true } }
        : LISTINGS.has(route.method.name)
          ? { "304": { description: "the listing is still the one of If-None-Match" } }
          : CREATES.has(route.method.name)
            ? { "507": { description: "every message id has been used (reason MESSAGE_IDS_EXHAUSTED)", problem: true } }
            : {},
    streamedJson: {
      WatchFeatureMessagesSse: { mediaType: "text/event-stream", schema: { type: "string" }, description: SSE },
      WatchGlobalMessagesSse: { mediaType: "text/event-stream", schema: { type: "string" }, description: SSE },
    },
  });
}
