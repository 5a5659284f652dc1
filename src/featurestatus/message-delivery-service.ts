// D63 RPCs: webhooks (BackOffice registers, lists, removes, reads the
// delivery log) and the Atom feeds of the active messages.
import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import {
  ListWebhookDeliveriesResponseSchema,
  ListWebhooksResponseSchema,
  MessageDeliveryService,
  WebhookDeliverySchema,
  WebhookSchema,
  type Webhook,
  type WebhookDelivery,
} from "../gen/meridian/featurestatus/v1/message_delivery_pb.js";
import { HttpBodySchema, type HttpBody } from "../gen/google/api/httpbody_pb.js";
import { invalidField, notFound } from "../kernel/errors.js";
import { formatDate, nowSeconds } from "./messages/message-fields.js";
import type { MessageListings } from "./listings/message-listings.js";
import { authorizeActiveRead, authorizeWrite, type Scope } from "./messages/access.js";
import { readerViewOf, sayLanguages, type ReaderParams } from "./listings/reader-view.js";
import { DEFAULT_LIMIT, MAX_LIMIT } from "./listings/listing-params.js";
import { newWebhook, type DeliveryRow, type WebhookRow, type WebhookStore } from "./webhooks/webhooks.js";
import { ATOM_CONTENT_TYPE, atomFeed } from "./listings/atom-feed.js";
import type { WebhookHosts } from "./webhooks/webhook-addresses.js";

export interface MessageDeliveryDeps {
  webhooks: WebhookStore;
  /** The listing pages (D51): a feed holds what its reader's listing holds. */
  listings: MessageListings;
  /** Hosts a webhook may reach over http: or although internal (MERIDIAN_WEBHOOK_HTTP_HOSTS, MERIDIAN_WEBHOOK_HOSTS). */
  hosts: WebhookHosts;
  /** Seconds since the epoch. */
  now?: () => number;
}

export function messageDeliveryService(deps: MessageDeliveryDeps): ServiceImpl<typeof MessageDeliveryService> {
  const now = deps.now ?? nowSeconds;

  const webhookOf = async (id: string): Promise<WebhookRow> => {
    const w = await deps.webhooks.get(id);
    if (!w) throw notFound(`no webhook has id ${id}`, "WEBHOOK_NOT_FOUND");
    return w;
  };

  /**
   * A feed holds what the first page of the reader's NonExpired listing holds
   * (D61, D62): the same selection from the same listing cache, in the same
   * language, the newest start first.
   */
  async function* feed(ctx: HandlerContext, scope: Scope, r: ReaderParams): AsyncGenerator<HttpBody> {
    authorizeActiveRead(ctx, scope);
    const view = readerViewOf(ctx, r);
    const page = await deps.listings.page(scope, view, { expiry: "NonExpired", sortBy: "StartDate", sortOrder: "Desc", limit: MAX_LIMIT });
    const changed = await deps.webhooks.lastChanges(page.data.map((m) => m.id));
    const entries = page.data.map((m) => {
      const start = Date.parse(m.startDate);
      return {
        id: `urn:meridian:message:${m.id}`,
        title: m.title,
        // Messages stored before the outbox existed: their start is the last change known.
        updated: Math.max(changed.get(m.id) ?? 0, start),
        published: start,
        html: m.body,
        category: m.type,
        lang: m.language,
      };
    });
    const xml = atomFeed({
      id: scope === null ? "urn:meridian:messages:global" : `urn:meridian:messages:feature:${scope}`,
      title: scope === null ? "Meridian: global messages" : `Meridian: messages of ${scope}`,
      updated: entries.length ? Math.max(...entries.map((e) => e.updated)) : now() * 1000,
      author: "Meridian",
      entries,
    });
    sayLanguages(ctx, page.data);
    yield create(HttpBodySchema, { contentType: ATOM_CONTENT_TYPE, data: Buffer.from(xml) });
  }

  return {
    async createWebhook(req, ctx) {
      authorizeWrite(ctx);
      const row = newWebhook(req, deps.hosts);
      await deps.webhooks.create(row);
      return toWebhook(row);
    },
    async listWebhooks(_req, ctx) {
      authorizeWrite(ctx);
      return create(ListWebhooksResponseSchema, { data: (await deps.webhooks.list()).map(toWebhook) });
    },
    async deleteWebhook(req, ctx) {
      authorizeWrite(ctx);
      if (!(await deps.webhooks.remove(req.webhookId))) throw notFound(`no webhook has id ${req.webhookId}`, "WEBHOOK_NOT_FOUND");
      return {};
    },
    async listWebhookDeliveries(req, ctx) {
      authorizeWrite(ctx);
      const limit = req.limit ?? DEFAULT_LIMIT;
      if (limit < 1 || limit > MAX_LIMIT) throw invalidField("limit", `must be 1 to ${MAX_LIMIT}`);
      const w = await webhookOf(req.webhookId);
      const rows = await deps.webhooks.deliveries(w.id, req.messageId, limit);
      return create(ListWebhookDeliveriesResponseSchema, { data: rows.map(toDelivery) });
    },
    getFeatureMessageFeed: (req, ctx) => feed(ctx, req.featureId, req),
    getGlobalMessageFeed: (req, ctx) => feed(ctx, null, req),
  };
}

function toWebhook(w: WebhookRow): Webhook {
  return create(WebhookSchema, {
    id: w.id,
    url: w.url,
    events: w.events.split(" "),
    createdAt: formatDate(Math.floor(w.created_at / 1000)),
  });
}

function toDelivery(d: DeliveryRow): WebhookDelivery {
  const iso = (ms: number | null) => (ms === null ? undefined : new Date(ms).toISOString());
  return create(WebhookDeliverySchema, {
    eventId: BigInt(d.event_id),
    event: d.type,
    messageId: d.message_id,
    status: d.state,
    attempts: d.attempts,
    createdAt: new Date(d.at).toISOString(),
    lastAttemptAt: iso(d.last_at),
    nextAttemptAt: d.state === "pending" && d.attempts > 0 ? iso(d.next_at) : undefined,
    lastStatus: d.last_status ?? undefined,
    lastAnswer: d.last_answer ?? undefined,
    lastError: d.last_error ?? undefined,
  });
}
