// D46 live push, written once for every way it is delivered (WatchMessages
// over gRPC, gRPC-Web and Connect; Server-Sent Events over REST): a watcher's
// stream of active sets, with the signals an SSE delivery needs besides them.
import { create, toBinary } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type { HttpBody } from "../../gen/google/api/httpbody_pb.js";
import {
  ActiveMessagesSchema,
  type ActiveMessages,
  type ListMessagesResponse,
} from "../../gen/meridian/featurestatus/v1/feature_status_pb.js";
import { credentialOf, principalOf } from "../../auth/principal.js";
import { recheckCaller } from "../../auth/authenticate.js";
import { longAnswerKey } from "../../kernel/long-answer.js";
import { authorizeActiveRead, type Scope } from "../messages/access.js";
import { digest } from "../messages/etags.js";
import { MAX_LIMIT } from "../listings/listing-params.js";
import type { MessageListings } from "../listings/message-listings.js";
import type { MessageWatch } from "./message-watch.js";
import type { View } from "../listings/reader-view.js";
import { dismissalsOf, markDismissed, type DismissalStore } from "../messages/dismissals.js";

/**
 * Besides the sets: "open" once the watcher is admitted, before anything else
 * (a refusal comes before it, so it can still be an error status), and
 * "heartbeat" when nothing was sent for a while. WatchMessages sends neither.
 */
export type WatchSignal = "open" | "heartbeat";

/** The active sets as Server-Sent Events: `event: messages`, the set's event id as the event's id, its data as REST writes it. */
export const ACTIVE_SET_EVENTS = { schema: ActiveMessagesSchema, event: "messages", idField: "eventId" } as const;

/**
 * How the SSE routes deliver a stream of active sets (the transport's, made
 * for ACTIVE_SET_EVENTS): it opens the stream with the caller's last event id
 * (the request's, else the Last-Event-ID header) and yields the answer.
 */
export type SseDelivery = (
  ctx: HandlerContext,
  lastEventId: string | undefined,
  open: (lastEventId: string | undefined) => AsyncIterable<ActiveMessages | WatchSignal>,
) => AsyncIterable<HttpBody>;

export interface WatchStreamOptions {
  /** A quiet stream is woken this often: the caller is checked again (D53) and a heartbeat is due. */
  heartbeatMs: number;
  /** Whether an error means the database is away for now (D40): a watcher then waits for it instead of ending. */
  isUnavailable?: (e: unknown) => boolean;
  /** D63: a person's dismissals, marked in the sets sent to them. */
  dismissals?: DismissalStore;
}

export class WatchStreams {
  /** Active sets made from one cached listing page: every watcher of a scope shares one (D46). */
  private readonly setsOfPage = new WeakMap<ListMessagesResponse, ActiveMessages>();
  /**
   * Moves at every dismissal (on PostgreSQL any replica's, and when its change
   * feed is back after an outage): a person's dismissals read before it moved
   * may be out of date.
   */
  private dismissalsSeen = 0;

  constructor(
    private readonly listings: MessageListings,
    private readonly watch: MessageWatch,
    private readonly options: WatchStreamOptions,
  ) {
    options.dismissals?.watch(() => this.dismissalsSeen++);
  }

  /**
   * D46: checks the caller (D13) and counts it among the watchers (D54: also
   * among its client's), then "open"; then the active set at once (unless the
   * caller's last event is still it), and again after every change that
   * alters it; a heartbeat when nothing was sent for a while, however many
   * changes elsewhere woke the watcher. Ends when the caller goes away or the
   * server stops (D57). D53: the caller is authenticated again before
   * anything is sent and whenever the clock wakes the watcher (a heartbeat is
   * due, the token expires): a credential that ended ends the stream with its
   * 401 (thrown), before anything more is sent. The database away after the
   * first set (D40) does not end it: the set is read again at the next wake
   * (PostgreSQL's change feed tells when it is back, or the heartbeat comes),
   * so the stream outlives an outage.
   */
  async *open(
    ctx: HandlerContext,
    scope: Scope,
    viewOf: () => View,
    lastEventId: string | undefined,
  ): AsyncGenerator<ActiveMessages | WatchSignal> {
    authorizeActiveRead(ctx, scope);
    // D61, D62: who reads, and in which language; a bad parameter is refused before the watcher is counted.
    const view = viewOf();
    const answer = ctx.values.get(longAnswerKey);
    const release = this.watch.enter(`${credentialOf(principalOf(ctx))} from ${answer?.clientAddress ?? ""}`, answer?.outlet);
    try {
      yield "open";
      yield* this.sets(ctx, scope, view, lastEventId);
    } finally {
      release(); // whenever the caller leaves, also before the first set
    }
  }

  private async *sets(
    ctx: HandlerContext,
    scope: Scope,
    view: View,
    lastEventId: string | undefined,
  ): AsyncGenerator<ActiveMessages | "heartbeat"> {
    const { heartbeatMs, isUnavailable } = this.options;
    const expiresAt = principalOf(ctx).expiresAt;
    let sent = lastEventId;
    let changed = true; // the first set is sent at once
    let first = true;
    let heartbeatAt = Date.now() + heartbeatMs;
    let last: { shared: ActiveMessages; dismissals: number; set: ActiveMessages } | undefined;
    for (;;) {
      let set: ActiveMessages | undefined;
      if (changed) {
        try {
          // A change elsewhere (another audience's message, D61) leaves this view's set as it was: with no
          // dismissal since, the person's marks are as they were too (the set names each message's
          // version, and a dismissal counts at its version only), so they are not read again.
          const shared = await this.activeSet(scope, view);
          if (last?.shared.eventId === shared.eventId && last.dismissals === this.dismissalsSeen) set = last.set;
          else {
            const dismissals = this.dismissalsSeen; // before the read: a dismissal during it is read next time
            set = await this.personal(ctx, shared);
            last = { shared, dismissals, set };
          }
        } catch (e) {
          if (first || !isUnavailable?.(e)) throw e;
        }
        first = false;
      }
      const unread: boolean = changed && !set; // the database was away: read again at the next wake
      // A timer may fire a millisecond early: a heartbeat that is as good as due is sent.
      const event = set && set.eventId !== sent ? set : Date.now() + 5 >= heartbeatAt ? "heartbeat" : undefined;
      if (event || !changed) await recheckCaller(ctx.values);
      if (event) {
        if (event !== "heartbeat") sent = event.eventId;
        yield event;
        heartbeatAt = Date.now() + heartbeatMs;
      }
      const untilExpiry = expiresAt === undefined ? Infinity : expiresAt - Date.now();
      const wait = Math.min(heartbeatAt - Date.now(), untilExpiry > 0 ? untilExpiry + 1 : Infinity);
      changed = (await this.watch.next(Math.max(0, wait), ctx.signal)) || unread;
      if (ctx.signal.aborted || this.watch.stopped) return;
    }
  }

  /** D63: the set as this caller reads it: the messages its person dismissed marked so, and named by a digest of its own. */
  private async personal(ctx: HandlerContext, set: ActiveMessages): Promise<ActiveMessages> {
    const store = this.options.dismissals;
    const dismissed = store ? await dismissalsOf(ctx, store) : new Set<number>();
    if (!set.data.some((m) => dismissed.has(m.id))) return set;
    const own = create(ActiveMessagesSchema, { data: markDismissed(set.data, dismissed) });
    own.eventId = digest(toBinary(ActiveMessagesSchema, own));
    return own;
  }

  /** The active messages of a scope as a view reads them (D19 NonExpired, every page), named by a digest (D46). */
  private async activeSet(scope: Scope, view: View): Promise<ActiveMessages> {
    const pages: ListMessagesResponse[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.listings.page(scope, view, { expiry: "NonExpired", limit: MAX_LIMIT, cursor });
      pages.push(page);
      cursor = page.cursor;
    } while (cursor);
    const memo = pages.length === 1 ? this.setsOfPage.get(pages[0]) : undefined;
    if (memo) return memo;
    const set = create(ActiveMessagesSchema, { data: pages.flatMap((p) => p.data) });
    set.eventId = digest(toBinary(ActiveMessagesSchema, set));
    if (pages.length === 1) this.setsOfPage.set(pages[0], set);
    return set;
  }
}
