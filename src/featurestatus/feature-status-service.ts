// The eight RPCs of part A. Per-feature and global routes share every rule;
// they differ only in scope (a feature, or global) and in what a 404 means.
import { create, toBinary, toJson } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import {
  ActiveMessagesSchema,
  AuditEntrySchema,
  ListMessageAuditResponseSchema,
  MessageFieldsSchema,
  type AuditEntry,
  FeatureStatusService,
  ListMessagesResponseSchema,
  MessageSchema,
  type ActiveMessages,
  type WatchMessagesRequest,
  type ListMessagesResponse,
  type Message,
  type MessageFields,
} from "../gen/meridian/featurestatus/v1/feature_status_pb.js";
import { ROLES, SCOPES, credentialOf, hasRole, hasScope, principalOf, type Principal } from "../auth/principal.js";
import { recheckCaller } from "../auth/authenticate.js";
import { problemOf } from "../core/problem.js";
import { requestInfoKey } from "../core/request-info.js";
import { outletKey } from "../core/outlet.js";
import { failure, invalidField, notFound, permissionDenied, ViolationList } from "../core/errors.js";
import type { CursorSeal } from "../core/cursor-seal.js";
import { OPAQUE_ID_RULE, isOpaqueId } from "../core/ids.js";
import { BODY_MAX, TITLE_MAX, formatDate, withinLength, nowSeconds, parseMessageType, parseZonedDate } from "./message-fields.js";
import {
  EXPIRIES,
  SORT_BYS,
  SORT_ORDERS,
  sortKeyOf,
  type Expiry,
  type MessageData,
  type MessageRow,
  type MessageStore,
  type SortBy,
  type SortOrder,
} from "./message-store.js";
import type { Sanitizer } from "./sanitize.js";
import { ListingCache } from "./listing-cache.js";
import { digest, ifMatch, listingEtag, messageEtag, stale } from "./etags.js";
import type { Actor, AuditQuery, AuditRow } from "./audit.js";
import { MessageWatch } from "./message-watch.js";
import { HttpBodySchema, type HttpBody } from "../gen/google/api/httpbody_pb.js";
import { JsonShaper } from "../core/json-shape.js";
import { SSE_CONTENT_TYPE, sseComment, sseEvent, sseRetryField } from "../core/sse.js";

const READ_SCOPES = [SCOPES.featureStatusRead, SCOPES.featureStatusReadWrite];
const WRITE_SCOPE = SCOPES.featureStatusReadWrite;
const BACK_OFFICE = ROLES.backOffice;

export const DEFAULT_LIMIT = 100; // D21
const LISTING_CACHE_BYTES = 32 * 1024 * 1024;
export const MAX_LIMIT = 1000;
const SSE_RETRY_MS = 2_000; // how soon a browser reconnects after a drop
const MERGE_ATTEMPTS = 5; // an unconditional update merged again when others keep writing the message

export interface FeatureStatusDeps {
  store: MessageStore;
  sanitizer: Sanitizer;
  cursors: CursorSeal;
  /** Seconds since the epoch. */
  now?: () => number;
  /** The listing cache's bound (D51); 0 keeps nothing. */
  listingCacheBytes?: number;
  /** Told of the listing cache's hits, misses and evictions (D43). */
  onCacheEvent?: (event: "hit" | "miss" | "eviction") => void;
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

/** An active set (D46), and its SSE event text, made when first asked. */
interface WatchedSet {
  set: ActiveMessages;
  /** The event's bytes, one copy for every SSE watcher of the set (a client slow to read holds no copy of its own). */
  sse(): Uint8Array;
}

/** Where a message lives: one feature, or global (null). */
type Scope = string | null;

interface ListParams {
  expiry?: string;
  sortBy?: string;
  sortOrder?: string;
  cursor?: string;
  limit?: number;
}

interface PageQuery {
  binding: string;
  scope: Scope;
  expiry: Expiry;
  sortBy: SortBy;
  sortOrder: SortOrder;
  limit: number;
  cursor?: string;
  /** Seconds since the epoch. */
  at: number;
}

export function featureStatusService(deps: FeatureStatusDeps): ServiceImpl<typeof FeatureStatusService> {
  const now = deps.now ?? nowSeconds;
  const listings = new ListingCache<ListMessagesResponse>(
    deps.store,
    deps.listingCacheBytes ?? LISTING_CACHE_BYTES,
    pageBytes,
    deps.onCacheEvent,
  );

  const heartbeatMs = deps.heartbeatMs ?? 15_000;
  const watch = new MessageWatch(
    deps.store,
    {
      maxWatchers: deps.maxWatchers ?? 10_000,
      maxPerClient: deps.maxWatchersPerClient ?? 100,
      maxQueuedBytes: deps.maxWatcherQueuedBytes ?? 256 * 1024,
      sweepMs: heartbeatMs,
      onDropped: deps.onWatcherDropped,
    },
    now,
  );
  deps.stopSignal?.addEventListener("abort", () => watch.stop(), { once: true });
  const shaper = new JsonShaper(); // REST's message JSON: featureId null when unset
  /** Listing pages' ETags (D47), made once per page the cache holds. */
  const pageEtags = new WeakMap<ListMessagesResponse, string>();

  /** D13: who may list (and watch) a scope's messages. */
  const authorizeList = (ctx: HandlerContext, scope: Scope): void => {
    const principal = principalOf(ctx);
    if (!hasScope(principal, ...READ_SCOPES)) throw permissionDenied(`listing messages needs scope ${READ_SCOPES[0]}`);
    checkScope(scope);
    if (scope !== null) {
      // D13: outside BackOffice, a caller lists only the feature its credential was issued for.
      if (!hasRole(principal, BACK_OFFICE) && principal.clientId !== scope) {
        throw permissionDenied(`client ${principal.clientId} may not list the messages of feature ${scope}`);
      }
    }
  };

  /** A listing page, from the cache when it is current. */
  const pageOf = (scope: Scope, p: ListParams): Promise<ListMessagesResponse> => {
    const v = new ViolationList();
    const expiry = oneOf<Expiry>(p.expiry, EXPIRIES, "NonExpired", "expiry", v);
    const sortBy = oneOf<SortBy>(p.sortBy, SORT_BYS, "StartDate", "sortBy", v);
    const sortOrder = oneOf<SortOrder>(p.sortOrder, SORT_ORDERS, "Desc", "sortOrder", v);
    const limit = limitOf(p.limit, v);
    v.throwIfAny();

    // The cursor is bound to the listing it came from (D21).
    const binding = JSON.stringify(["messages", scope, expiry, sortBy, sortOrder]);
    const at = now();
    return listings.get(`${binding}|${limit}|${p.cursor ?? ""}`, at, () =>
      page({ binding, scope, expiry, sortBy, sortOrder, limit, cursor: p.cursor, at }),
    );
  };

  const list = async (ctx: HandlerContext, scope: Scope, p: ListParams): Promise<ListMessagesResponse> => {
    authorizeList(ctx, scope);
    const response = await pageOf(scope, p);
    let etag = pageEtags.get(response);
    if (etag === undefined) pageEtags.set(response, (etag = listingEtag(toBinary(ListMessagesResponseSchema, response))));
    ctx.responseHeader.set("etag", etag); // REST answers If-None-Match with 304 (transcoder.ts)
    return response;
  };

  /** Active sets made from one cached listing page: every watcher of a scope shares one (D46). */
  const setsOfPage = new WeakMap<ListMessagesResponse, WatchedSet>();

  /** The active messages of a scope (D19 NonExpired, every page), named by a digest (D46). */
  const activeSet = async (scope: Scope): Promise<WatchedSet> => {
    const pages: ListMessagesResponse[] = [];
    let cursor: string | undefined;
    do {
      const page = await pageOf(scope, { expiry: "NonExpired", limit: MAX_LIMIT, cursor });
      pages.push(page);
      cursor = page.cursor;
    } while (cursor);
    const memo = pages.length === 1 ? setsOfPage.get(pages[0]) : undefined;
    if (memo) return memo;
    const set = create(ActiveMessagesSchema, { data: pages.flatMap((p) => p.data) });
    set.eventId = digest(toBinary(ActiveMessagesSchema, set));
    let sse: Uint8Array | undefined;
    const watched: WatchedSet = {
      set,
      // The SSE event as REST writes messages (featureId null when unset), made once.
      sse: () =>
        (sse ??= Buffer.from(
          sseEvent(
            set.eventId,
            "messages",
            JSON.stringify({
              data: set.data.map((m) => shaper.shape(MessageSchema, toJson(MessageSchema, m, { alwaysEmitImplicit: true }))),
            }),
          ),
        )),
    };
    if (pages.length === 1) setsOfPage.set(pages[0], watched);
    return watched;
  };

  /** D46: checks the caller (D13) and counts it among the watchers (D54: also among its client's), before any byte is sent; returns the release. */
  const openWatch = (ctx: HandlerContext, scope: Scope): (() => void) => {
    authorizeList(ctx, scope);
    const address = ctx.values.get(requestInfoKey)?.clientAddress ?? "";
    return watch.enter(`${credentialOf(principalOf(ctx))} from ${address}`, ctx.values.get(outletKey));
  };

  /**
   * D46: the active set at once (unless the caller's last event is still it),
   * then again after every change that alters it; a heartbeat when nothing was
   * sent for a while, however many changes elsewhere woke the watcher. Ends
   * when the caller goes away or the server stops (D57). D53: the caller is
   * authenticated again before anything is sent and whenever the clock wakes
   * the watcher (a heartbeat is due, the token expires): a credential that
   * ended ends the stream with its 401 (thrown), before anything more is sent.
   * The database away after the first set (D40) does not end it: the set is
   * read again at the next wake (PostgreSQL's change feed tells when it is
   * back, or the heartbeat comes), so the stream outlives an outage.
   */
  async function* watchSets(ctx: HandlerContext, scope: Scope, lastEventId: string | undefined): AsyncGenerator<WatchedSet | "heartbeat"> {
    const expiresAt = principalOf(ctx).expiresAt;
    let sent = lastEventId;
    let changed = true; // the first set is sent at once
    let first = true;
    let heartbeatAt = Date.now() + heartbeatMs;
    for (;;) {
      let watched: WatchedSet | undefined;
      if (changed) {
        try {
          watched = await activeSet(scope);
        } catch (e) {
          if (first || !deps.isUnavailable?.(e)) throw e;
        }
        first = false;
      }
      const unread: boolean = changed && !watched; // the database was away: read again at the next wake
      // A timer may fire a millisecond early: a heartbeat that is as good as due is sent.
      const event = watched && watched.set.eventId !== sent ? watched : Date.now() + 5 >= heartbeatAt ? "heartbeat" : undefined;
      if (event || !changed) await recheckCaller(ctx.values);
      if (event) {
        if (event !== "heartbeat") sent = event.set.eventId;
        yield event;
        heartbeatAt = Date.now() + heartbeatMs;
      }
      const untilExpiry = expiresAt === undefined ? Infinity : expiresAt - Date.now();
      const wait = Math.min(heartbeatAt - Date.now(), untilExpiry > 0 ? untilExpiry + 1 : Infinity);
      changed = (await watch.next(Math.max(0, wait), ctx.signal)) || unread;
      if (ctx.signal.aborted || watch.stopped) return;
    }
  }

  /** The same as Server-Sent Events, in the message JSON of REST answers. */
  async function* watchSse(ctx: HandlerContext, scope: Scope, req: WatchMessagesRequest): AsyncGenerator<HttpBody> {
    const release = openWatch(ctx, scope);
    const body = (data: string | Uint8Array) =>
      create(HttpBodySchema, { contentType: SSE_CONTENT_TYPE, data: typeof data === "string" ? Buffer.from(data) : data });
    try {
      ctx.responseHeader.set("cache-control", "no-cache");
      ctx.responseHeader.set("x-accel-buffering", "no"); // proxies: pass each event on at once
      // The head goes out at once (a comment, no event), so the caller knows the stream is open
      // even when its Last-Event-ID is still the set; the first event carries the retry hint.
      yield body(sseComment("stream open"));
      let retry: string | undefined = sseRetryField(SSE_RETRY_MS);
      const withRetry = (event: string | Uint8Array) => {
        const head = retry;
        retry = undefined;
        return head === undefined ? event : Buffer.concat([Buffer.from(head), Buffer.from(event)]);
      };
      const lastEventId = req.lastEventId ?? ctx.requestHeader.get("last-event-id") ?? undefined;
      for await (const set of watchSets(ctx, scope, lastEventId)) {
        if (set === "heartbeat") yield body(sseComment("heartbeat"));
        else yield body(withRetry(set.sse()));
      }
    } catch (e) {
      // D53: the status went out long ago; the refusal is an event the page can read, then the end.
      if (!(e instanceof ConnectError) || e.code !== Code.Unauthenticated) throw e;
      yield body(sseEvent(undefined, "error", JSON.stringify(problemOf(e))));
    } finally {
      release(); // whenever the caller leaves, also before the first set
    }
  }

  const page = async ({ binding, scope, expiry, sortBy, sortOrder, limit, cursor, at }: PageQuery): Promise<ListMessagesResponse> => {
    let after: { key: number; id: number } | undefined;
    if (cursor !== undefined && cursor !== "") {
      const opened = deps.cursors.open(binding, cursor);
      if (!isPosition(opened)) throw invalidField("cursor", "malformed, or issued for another listing", "CURSOR_INVALID");
      after = { key: opened[0], id: opened[1] };
    }
    // One row more than asked tells whether another page follows.
    const rows = await deps.store.list({ featureId: scope, expiry, sortBy, sortOrder, after, limit: limit + 1, now: at });
    const more = rows.length > limit;
    const page = more ? rows.slice(0, limit) : rows;
    const last = page[page.length - 1];
    return create(ListMessagesResponseSchema, {
      data: page.map(toMessage),
      cursor: more ? deps.cursors.seal(binding, [sortKeyOf(last, sortBy), last.id]) : undefined,
    });
  };

  const createIn = async (ctx: HandlerContext, scope: Scope, fields: MessageFields | undefined): Promise<Message> => {
    requireWriter(principalOf(ctx));
    checkScope(scope);
    const f = fields ?? ({} as MessageFields);
    const v = new ViolationList();
    for (const name of ["type", "title", "startDate", "expiringDate"] as const) if (f[name] === undefined) v.add(name, "is required");
    const data = validated({ feature_id: scope, type: "", title: "", body: "", start_date: 0, expiring_date: 0 }, f, deps.sanitizer, v);
    return answer(ctx, await deps.store.insert(data, actorOf(principalOf(ctx))));
  };

  const updateIn = async (
    ctx: HandlerContext,
    scope: Scope,
    messageId: number,
    fields: MessageFields | undefined,
    etag: string | undefined,
  ): Promise<Message> => {
    requireWriter(principalOf(ctx));
    const condition = ifMatch(etag ?? ctx.requestHeader.get("if-match"));
    // The write applies to the version it was merged from (D47): when another writer came
    // between, an unconditional update merges again from the new version; a conditional one is a 412.
    for (let attempt = 0; attempt < MERGE_ATTEMPTS; attempt++) {
      const existing = await findIn(scope, messageId);
      if (condition && !condition(existing)) throw stale(existing);
      // D16: absent fields keep their value; the merge is validated as on create. featureId never changes.
      const merged = validated(existing, fields ?? ({} as MessageFields), deps.sanitizer);
      const written = await deps.store.update(existing, merged, actorOf(principalOf(ctx)));
      if (written) return answer(ctx, written);
    }
    throw failure("WRITE_CONFLICT", `message ${messageId} kept changing while it was being updated; retry`);
  };

  const deleteIn = async (ctx: HandlerContext, scope: Scope, messageId: number, etag: string | undefined) => {
    requireWriter(principalOf(ctx));
    const condition = ifMatch(etag ?? ctx.requestHeader.get("if-match"));
    const existing = await findIn(scope, messageId);
    if (!condition) {
      await deps.store.delete(messageId, undefined, actorOf(principalOf(ctx)));
      return {};
    }
    if (!condition(existing)) throw stale(existing);
    // Deleted only at the version just checked; if it moved on meanwhile, say how it is now.
    if (!(await deps.store.delete(messageId, existing.version, actorOf(principalOf(ctx))))) throw stale(await findIn(scope, messageId));
    return {};
  };

  /** One message, for whoever may list its scope (D13), with its ETag. */
  const getIn = async (ctx: HandlerContext, scope: Scope, messageId: number): Promise<Message> => {
    authorizeList(ctx, scope);
    return answer(ctx, await findIn(scope, messageId));
  };

  /** A message as answered, with its ETag (D47). */
  const answer = (ctx: HandlerContext, row: MessageRow): Message => {
    ctx.responseHeader.set("etag", messageEtag(row));
    return toMessage(row);
  };

  /** The message, if it belongs to this scope; a message of another feature, or of the other kind, is a 404. */
  const findIn = async (scope: Scope, messageId: number): Promise<MessageRow> => {
    checkScope(scope);
    const row = messageId > 0 ? await deps.store.get(messageId) : undefined;
    if (!row || row.feature_id !== scope) {
      throw notFound(
        scope === null ? `no global message ${messageId}` : `no message ${messageId} for feature ${scope}`,
        "MESSAGE_NOT_FOUND",
      );
    }
    return row;
  };

  return {
    listFeatureMessages: (req, ctx) => list(ctx, req.featureId, req),
    listGlobalMessages: (req, ctx) => list(ctx, null, req),
    createFeatureMessage: (req, ctx) => createIn(ctx, req.featureId, req.message),
    createGlobalMessage: (req, ctx) => createIn(ctx, null, req.message),
    previewMessage: (req, ctx) => {
      requireWriter(principalOf(ctx));
      // The write's own validation over a neutral message: what is sent comes back as it would be stored.
      // Its dates are the ends of time, so that a date sent alone meets no order it was not sent with.
      const neutral = {
        feature_id: null,
        type: "Informational",
        title: "-",
        body: "",
        start_date: -Infinity,
        expiring_date: Infinity,
      } as const;
      const out = validated(neutral, req, deps.sanitizer);
      return create(MessageFieldsSchema, {
        type: req.type === undefined ? undefined : out.type,
        title: req.title === undefined ? undefined : out.title,
        body: req.body === undefined ? undefined : out.body,
        startDate: req.startDate === undefined ? undefined : formatDate(out.start_date),
        expiringDate: req.expiringDate === undefined ? undefined : formatDate(out.expiring_date),
      });
    },
    getFeatureMessage: (req, ctx) => getIn(ctx, req.featureId, req.messageId),
    getGlobalMessage: (req, ctx) => getIn(ctx, null, req.messageId),
    listMessageAudit: async (req, ctx) => {
      const principal = principalOf(ctx);
      if (!hasScope(principal, ...READ_SCOPES) || !hasRole(principal, BACK_OFFICE)) {
        throw permissionDenied(`the audit trail is for the ${BACK_OFFICE} role with scope ${READ_SCOPES[0]} or ${READ_SCOPES[1]}`);
      }
      const v = new ViolationList();
      const from = req.from === undefined ? undefined : parseZonedDate(req.from, "from", v);
      const to = req.to === undefined ? undefined : parseZonedDate(req.to, "to", v);
      const limit = limitOf(req.limit, v);
      v.throwIfAny();
      const query: AuditQuery = { messageId: req.messageId, featureId: req.featureId, clientId: req.clientId, limit: limit + 1 };
      if (from !== undefined) query.from = from * 1000;
      if (to !== undefined) query.to = to * 1000 + 999; // the whole last second
      // The cursor is bound to the filters it came from (D21).
      const binding = JSON.stringify([
        "audit",
        req.messageId ?? null,
        req.featureId ?? null,
        req.clientId ?? null,
        req.from ?? null,
        req.to ?? null,
      ]);
      if (req.cursor !== undefined && req.cursor !== "") {
        const opened = deps.cursors.open(binding, req.cursor);
        if (!Array.isArray(opened) || opened.length !== 1 || !Number.isSafeInteger(opened[0]))
          throw invalidField("cursor", "malformed, or issued for another listing", "CURSOR_INVALID");
        query.beforeId = opened[0] as number;
      }
      const rows = await deps.store.listAudit(query);
      const page = rows.slice(0, limit);
      return create(ListMessageAuditResponseSchema, {
        data: page.map(toAuditEntry),
        cursor: rows.length > limit ? deps.cursors.seal(binding, [page[page.length - 1].id]) : undefined,
      });
    },
    watchMessages: async function* (req, ctx) {
      const scope = req.featureId ?? null;
      const release = openWatch(ctx, scope);
      try {
        for await (const watched of watchSets(ctx, scope, req.lastEventId)) if (watched !== "heartbeat") yield watched.set;
      } finally {
        release();
      }
    },
    watchFeatureMessagesSse: (req, ctx) => watchSse(ctx, req.featureId ?? null, req),
    watchGlobalMessagesSse: (req, ctx) => watchSse(ctx, null, req),
    updateFeatureMessage: (req, ctx) => updateIn(ctx, req.featureId, req.messageId, req.message, req.etag),
    updateGlobalMessage: (req, ctx) => updateIn(ctx, null, req.messageId, req.message, req.etag),
    deleteFeatureMessage: (req, ctx) => deleteIn(ctx, req.featureId, req.messageId, req.etag),
    deleteGlobalMessage: (req, ctx) => deleteIn(ctx, null, req.messageId, req.etag),
  };
}

function requireWriter(p: Principal): void {
  // D13: both the readwrite scope and the BackOffice role.
  if (!hasScope(p, WRITE_SCOPE) || !hasRole(p, BACK_OFFICE)) {
    throw permissionDenied(`writing messages needs scope ${WRITE_SCOPE} and role ${BACK_OFFICE}`);
  }
}

/** D18 for a feature scope; the global scope has no id to check. */
function checkScope(scope: Scope): void {
  if (scope !== null && !isOpaqueId(scope)) throw invalidField("featureId", `must be ${OPAQUE_ID_RULE}`);
}

/** Applies the given fields over `base`, validating and sanitising the result (D15-D17, D20). */
function validated(base: MessageData, f: MessageFields, sanitizer: Sanitizer, v = new ViolationList()): MessageData {
  const out: MessageData = { ...base };
  if (f.type !== undefined) out.type = parseMessageType(f.type, "type", v) ?? out.type;
  if (f.title !== undefined) {
    const title = cleaned("title", f.title, TITLE_MAX, (t) => sanitizer.title(t), "holds encoded markup that cannot be made plain", v);
    if (title === "") v.add("title", "is empty once markup is removed");
    else if (title !== undefined) out.title = title;
  }
  if (f.body !== undefined) {
    out.body = cleaned("body", f.body, BODY_MAX, (b) => sanitizer.body(b), "holds markup outside the allowed HTML subset", v) ?? out.body;
  }
  if (f.startDate !== undefined) out.start_date = parseZonedDate(f.startDate, "startDate", v) ?? out.start_date;
  if (f.expiringDate !== undefined) out.expiring_date = parseZonedDate(f.expiringDate, "expiringDate", v) ?? out.expiring_date;
  if (v.empty && out.expiring_date <= out.start_date) v.add("expiringDate", "must be after startDate");
  v.throwIfAny();
  return out;
}

/**
 * A text field sanitised, or undefined with a violation. Its length (D17, D52)
 * is checked as sent and as it would be stored, so that what is read back and
 * sent unchanged is accepted again (sanitising may add closing tags).
 */
function cleaned(
  field: string,
  text: string,
  max: number,
  clean: (text: string) => string | undefined,
  refusal: string,
  v: ViolationList,
): string | undefined {
  const tooLong = `must be at most ${max} characters`;
  if (!withinLength(text, max)) return void v.add(field, tooLong);
  const out = clean(text);
  if (out === undefined) return void v.add(field, refusal);
  if (!withinLength(out, max)) return void v.add(field, tooLong);
  return out;
}

/** D19: filter and sort values are case-insensitive; unknown values are a 400. */
function oneOf<T extends string>(value: string | undefined, allowed: readonly T[], fallback: T, field: string, v: ViolationList): T {
  if (value === undefined || value === "") return fallback;
  const hit = allowed.find((a) => a.toLowerCase() === value.toLowerCase());
  if (!hit) v.add(field, `must be one of ${allowed.join(", ")}`);
  return hit ?? fallback;
}

function isPosition(x: unknown): x is [number, number] {
  return Array.isArray(x) && x.length === 2 && Number.isInteger(x[0]) && Number.isInteger(x[1]);
}

/**
 * The bytes a cached page holds, erring high: its strings at two bytes a
 * character, twice (the REST transcoder keeps a page's JSON text as long as
 * the page lives), plus the JSON's names and the objects around each message.
 */
function pageBytes(p: ListMessagesResponse): number {
  let chars = p.cursor?.length ?? 0;
  for (const m of p.data) chars += m.title.length + m.body.length + (m.featureId?.length ?? 0) + 140;
  return 4 * chars + 256 * p.data.length;
}

/** D21: a page's size, 1..1000 (default 100); above 1000 it is clamped, below 1 refused. */
function limitOf(asked: number | undefined, v: ViolationList): number {
  const limit = asked ?? DEFAULT_LIMIT;
  if (limit < 1) v.add("limit", "must be an integer of at least 1");
  return Math.min(limit, MAX_LIMIT);
}

/** Who a caller is, for the audit trail (D48). */
function actorOf(p: Principal): Actor {
  return { clientId: p.clientId, keyId: p.keyId, issuer: p.issuer, subject: p.subject };
}

function toAuditEntry(r: AuditRow): AuditEntry {
  const message = (json: string | null) => (json === null ? undefined : toMessage(JSON.parse(json) as MessageRow));
  return create(AuditEntrySchema, {
    id: BigInt(r.id),
    at: new Date(r.at).toISOString(),
    action: r.action,
    messageId: r.message_id,
    featureId: r.feature_id ?? undefined,
    clientId: r.client_id ?? undefined,
    keyId: r.key_id ?? undefined,
    issuer: r.issuer ?? undefined,
    subject: r.subject ?? undefined,
    before: message(r.before),
    after: message(r.after),
  });
}

function toMessage(row: MessageRow): Message {
  return create(MessageSchema, {
    id: row.id,
    featureId: row.feature_id ?? undefined,
    type: row.type,
    title: row.title,
    body: row.body,
    startDate: formatDate(row.start_date),
    expiringDate: formatDate(row.expiring_date),
  });
}
