// The RPCs of the feature status service, bound to the rules they follow:
// access (access.ts, D13), input (message-input.ts, listing-params.ts),
// listing pages and their cursors (message-listings.ts, listing-cursor.ts),
// edits of one message (message-edits.ts), the audit trail
// (audit-listing.ts) and live push (watch-stream.ts, delivered as
// Server-Sent Events by the transport). Per-feature and global routes share
// every rule; they differ only in scope (a feature, or global) and in what a
// 404 means.
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import {
  ListMessagesResponseSchema,
  type FeatureStatusService,
  type ListMessagesResponse,
  type Message,
  type WatchMessagesRequest,
} from "../gen/meridian/featurestatus/v1/feature_status_pb.js";
import { failure } from "../kernel/errors.js";
import type { CursorSeal } from "../kernel/cursor-seal.js";
import { authorizeActiveRead, authorizeRead, authorizeWrite, type Scope } from "./messages/access.js";
import { readerViewOf, sayLanguages, type ReaderParams } from "./listings/reader-view.js";
import { auditPage } from "./audit/audit-listing.js";
import { dismissalsOf, dismissingSubject, markDismissed, type DismissalStore } from "./messages/dismissals.js";
import { MessageEdits } from "./messages/message-edits.js";
import { readerEtag } from "./messages/etags.js";
import { nowSeconds } from "./messages/message-fields.js";
import { previewed } from "./messages/message-input.js";
import type { ListParams } from "./listings/listing-params.js";
import type { MessageListings } from "./listings/message-listings.js";
import type { MessageStore } from "./messages/message-store.js";
import { MessageWatch } from "./live/message-watch.js";
import type { MessageWrites } from "./messages/message-writes.js";
import type { ChangeWatch } from "./live/change-bus.js";
import type { Sanitizer } from "./messages/sanitize.js";
import { WatchStreams, type SseDelivery } from "./live/watch-stream.js";

export interface FeatureStatusDeps {
  /** The messages as read (writes go through `writes`). */
  store: MessageStore;
  /** Every write of a message, with its audit record, event and notification (message-writes.ts). */
  writes: MessageWrites;
  /** Told after each change of the messages, off the writer's call stack (change-bus.ts). */
  changes: ChangeWatch;
  /** The listing pages, from the listing cache (D51); the feeds (D63) read the same. */
  listings: MessageListings;
  /** D63: dismissals kept for a person (a token's subject). */
  dismissals: DismissalStore;
  sanitizer: Sanitizer;
  cursors: CursorSeal;
  /** Delivers the live streams as Server-Sent Events (D46) on the SSE routes. */
  sse: SseDelivery;
  /** Seconds since the epoch. */
  now?: () => number;
  /** D46: watchers (streams of WatchMessages and SSE) this process serves at once. */
  maxWatchers?: number;
  /** D54: watchers one client (credential and address) holds at once. */
  maxWatchersPerClient?: number;
  /** D54: bytes of a watcher's answer that may wait for its client before it is dropped. */
  maxWatcherQueuedBytes?: number;
  /** D54: told of a watcher dropped for not reading. */
  onWatcherDropped?: (client: string, queuedBytes: number) => void;
  /** D57: aborted when the server starts to stop; every watcher ends then. */
  stopSignal?: AbortSignal;
  /** D46: a quiet SSE stream gets a comment this often. */
  heartbeatMs?: number;
  /** Whether an error means the database is away for now (D40): a watcher then waits for it instead of ending. */
  isUnavailable?: (e: unknown) => boolean;
}

export function featureStatusService(deps: FeatureStatusDeps): ServiceImpl<typeof FeatureStatusService> {
  const now = deps.now ?? nowSeconds;
  const listings = deps.listings;
  const edits = new MessageEdits(deps.store, deps.writes, deps.sanitizer);
  const heartbeatMs = deps.heartbeatMs ?? 15_000;
  const watch = new MessageWatch(
    deps.store,
    deps.changes,
    {
      maxWatchers: deps.maxWatchers ?? 10_000,
      maxPerClient: deps.maxWatchersPerClient ?? 100,
      maxQueuedBytes: deps.maxWatcherQueuedBytes ?? 256 * 1024,
      sweepMs: heartbeatMs,
      onDropped: deps.onWatcherDropped,
    },
    now,
    [(fn) => deps.dismissals.watch(fn)],
  );
  deps.stopSignal?.addEventListener("abort", () => watch.stop(), { once: true });
  const streams = new WatchStreams(listings, watch, { heartbeatMs, isUnavailable: deps.isUnavailable, dismissals: deps.dismissals });

  /** D21, D47: a listing page with its ETag (REST answers If-None-Match with 304, transcoder.ts). */
  const list = async (ctx: HandlerContext, scope: Scope, p: ListParams & ReaderParams): Promise<ListMessagesResponse> => {
    authorizeActiveRead(ctx, scope, p.expiry);
    const shared = await listings.page(scope, readerViewOf(ctx, p), p);
    // D63: a person's dismissals marked on their own copy; the cached page stays everyone's.
    const dismissed = await dismissalsOf(ctx, deps.dismissals);
    const page = shared.data.some((m) => dismissed.has(m.id))
      ? create(ListMessagesResponseSchema, { data: markDismissed(shared.data, dismissed), cursor: shared.cursor })
      : shared;
    ctx.responseHeader.set("etag", listings.etagOf(page));
    sayLanguages(ctx, page.data);
    return page;
  };

  /** One message by id, as the caller reads it (D61, D62); a reader's own dismissal marked (D63). */
  const get = async (ctx: HandlerContext, scope: Scope, messageId: number): Promise<Message> => {
    const view = readerViewOf(ctx, { audience: [] });
    const message = await edits.get(ctx, scope, messageId, view);
    if (view.full) return message;
    sayLanguages(ctx, [message]);
    const dismissed = await dismissalsOf(ctx, deps.dismissals);
    const answer = dismissed.has(message.id) ? markDismissed([message], dismissed)[0] : message;
    ctx.responseHeader.set("etag", readerEtag(answer));
    return answer;
  };

  /** D63: the caller's person dismisses a message of the scope at its current version. */
  const dismiss = async (ctx: HandlerContext, scope: Scope, messageId: number): Promise<object> => {
    const subject = dismissingSubject(ctx); // first: an API key of any kind is told why it cannot
    authorizeRead(ctx, scope);
    const row = await edits.visible(scope, messageId, readerViewOf(ctx, { audience: [] }));
    if (!row.dismissible) throw failure("MESSAGE_NOT_DISMISSIBLE", `message ${messageId} is marked not dismissible`);
    await deps.dismissals.dismiss(subject, row.id, row.version);
    return {};
  };

  /** The SSE routes deliver the same stream as WatchMessages (D62: its events in the reader's language). */
  const watchSse = (ctx: HandlerContext, scope: Scope, req: WatchMessagesRequest) => {
    ctx.responseHeader.set("vary", "accept-language");
    return deps.sse(ctx, req.lastEventId, (lastEventId) => streams.open(ctx, scope, () => readerViewOf(ctx, req), lastEventId));
  };

  return {
    listFeatureMessages: (req, ctx) => list(ctx, req.featureId, req),
    listGlobalMessages: (req, ctx) => list(ctx, null, req),
    createFeatureMessage: (req, ctx) => edits.create(ctx, req.featureId, req.message),
    createGlobalMessage: (req, ctx) => edits.create(ctx, null, req.message),
    previewMessage: (req, ctx) => {
      authorizeWrite(ctx);
      return previewed(req, deps.sanitizer);
    },
    getFeatureMessage: (req, ctx) => get(ctx, req.featureId, req.messageId),
    getGlobalMessage: (req, ctx) => get(ctx, null, req.messageId),
    listMessageAudit: (req, ctx) => auditPage(ctx, req, deps.store, deps.cursors),
    watchMessages: async function* (req, ctx) {
      const scope = req.featureId ?? null;
      for await (const item of streams.open(ctx, scope, () => readerViewOf(ctx, req), req.lastEventId))
        if (typeof item !== "string") yield item;
    },
    watchFeatureMessagesSse: (req, ctx) => watchSse(ctx, req.featureId ?? null, req),
    watchGlobalMessagesSse: (req, ctx) => watchSse(ctx, null, req),
    updateFeatureMessage: (req, ctx) => edits.update(ctx, req.featureId, req.messageId, req.message, req.etag),
    updateGlobalMessage: (req, ctx) => edits.update(ctx, null, req.messageId, req.message, req.etag),
    deleteFeatureMessage: (req, ctx) => edits.delete(ctx, req.featureId, req.messageId, req.etag),
    deleteGlobalMessage: (req, ctx) => edits.delete(ctx, null, req.messageId, req.etag),
    dismissFeatureMessage: (req, ctx) => dismiss(ctx, req.featureId, req.messageId),
    dismissGlobalMessage: (req, ctx) => dismiss(ctx, null, req.messageId),
  };
}
