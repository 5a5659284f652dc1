// The REST documentation of D63's routes beyond what the proto says: the
// Atom feeds' media type and languages, the form of ids and times, and
// examples.
import type { DescField } from "@bufbuild/protobuf";
import { MessageDeliveryService } from "../gen/meridian/featurestatus/v1/message_delivery_pb.js";
import type { Schema } from "../transport/rest/openapi.js";
import type { ServiceRegistry } from "../transport/service-registry.js";

const PKG = "meridian.featurestatus.v1";
/** Webhook ids are GUIDs the server makes (randomUUID); times are written by toISOString. */
const FACTS: Record<string, Schema> = {
  "Webhook.id": { format: "uuid" },
  "Webhook.created_at": { format: "date-time" },
  "DeleteWebhookRequest.webhook_id": { format: "uuid" },
  "ListWebhookDeliveriesRequest.webhook_id": { format: "uuid" },
  "WebhookDelivery.created_at": { format: "date-time" },
  "WebhookDelivery.last_attempt_at": { format: "date-time" },
  "WebhookDelivery.next_attempt_at": { format: "date-time" },
};
const fieldFacts = (f: DescField): Schema | undefined =>
  f.parent.typeName.startsWith(`${PKG}.`) ? FACTS[`${f.parent.typeName.slice(PKG.length + 1)}.${f.name}`] : undefined;

const FEED =
  "An Atom 1.0 feed (RFC 4287) of the active messages the caller may see: an entry per message (id urn:meridian:message:<id>, its title, when it last changed, its type as category, its body as content type=html).";
const FEED_EXAMPLE = `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <id>urn:meridian:messages:global</id>
  <title>Meridian: global messages</title>
  <updated>2026-01-01T00:00:00Z</updated>
  <author><name>Meridian</name></author>
  <entry>
    <id>urn:meridian:message:1</id>
    <title type="text">Maintenance tonight</title>
    <updated>2026-01-01T00:00:00Z</updated>
    <published>2026-01-01T00:00:00Z</published>
    <category term="Warning"/>
    <content type="html">&lt;b&gt;22:00-23:00&lt;/b&gt; UTC</content>
  </entry>
</feed>
`;

export function documentMessageDeliveryRest(registry: ServiceRegistry): void {
  registry.documentRest(MessageDeliveryService, {
    tag: {
      name: "Message delivery",
      description:
        "Messages beyond the page: webhooks told of every create, update, delete, start and expiry, signed with Meridian-Signature; and Atom feeds of the active messages.",
    },
    fields: fieldFacts,
    // D62: a feed names the languages its entries are in.
    answerHeaders: (route) => ({ "200": route.streamsHttpBody ? ["Content-Language"] : [] }),
    examples: {
      CreateWebhook: {
        request: { url: "https://hooks.example/meridian", secret: "a-long-random-secret", events: ["message.created"] },
        response: {
          id: "0b6f3c1e-6a57-4d43-9d58-3b1f1f0c9a11",
          url: "https://hooks.example/meridian",
          events: ["message.created"],
          createdAt: "2026-01-01T00:00:00Z",
        },
      },
      GetGlobalMessageFeed: { response: FEED_EXAMPLE },
    },
    streamedJson: {
      GetFeatureMessageFeed: { mediaType: "application/atom+xml", schema: { type: "string" }, description: FEED },
      GetGlobalMessageFeed: { mediaType: "application/atom+xml", schema: { type: "string" }, description: FEED },
    },
  });
}
