// Listing pages (D19, D21), from the listing cache while nothing may have
// changed them (D43, D51), each with its ETag (D47).
import { create, toBinary } from "@bufbuild/protobuf";
import { ListMessagesResponseSchema, type ListMessagesResponse } from "../gen/meridian/featurestatus/v1/feature_status_pb.js";
import type { CursorSeal } from "../core/cursor-seal.js";
import type { Scope } from "./access.js";
import { listingEtag } from "./etags.js";
import { ListingCache } from "./listing-cache.js";
import { issueListingCursor, listingBinding, openListingCursor } from "./listing-cursor.js";
import { listingOf, type ListParams } from "./listing-params.js";
import type { MessageStore } from "./message-store.js";
import { toMessage } from "./message-protos.js";

export class MessageListings {
  private readonly cache: ListingCache<ListMessagesResponse>;
  /** Pages' ETags, made once per page the cache holds. */
  private readonly etags = new WeakMap<ListMessagesResponse, string>();

  constructor(
    private readonly store: MessageStore,
    private readonly cursors: CursorSeal,
    /** Seconds since the epoch. */
    private readonly now: () => number,
    cacheBytes: number,
    onCacheEvent?: (event: "hit" | "miss" | "eviction") => void,
  ) {
    this.cache = new ListingCache<ListMessagesResponse>(store, cacheBytes, pageBytes, onCacheEvent);
  }

  /** A listing page, from the cache when it is current. */
  page(scope: Scope, p: ListParams): Promise<ListMessagesResponse> {
    const listing = listingOf(p);
    const binding = listingBinding(scope, listing);
    const at = this.now();
    return this.cache.get(`${binding}|${listing.limit}|${p.cursor ?? ""}`, at, async () => {
      const after = openListingCursor(this.cursors, binding, p.cursor);
      // One row more than asked tells whether another page follows.
      const { expiry, sortBy, sortOrder, limit } = listing;
      const rows = await this.store.list({ featureId: scope, expiry, sortBy, sortOrder, after, limit: limit + 1, now: at });
      const more = rows.length > limit;
      const page = more ? rows.slice(0, limit) : rows;
      return create(ListMessagesResponseSchema, {
        data: page.map(toMessage),
        cursor: more ? issueListingCursor(this.cursors, binding, listing, page[page.length - 1]) : undefined,
      });
    });
  }

  /** D47: a page's ETag, a digest of it as sent. */
  etagOf(page: ListMessagesResponse): string {
    let etag = this.etags.get(page);
    if (etag === undefined) this.etags.set(page, (etag = listingEtag(toBinary(ListMessagesResponseSchema, page))));
    return etag;
  }
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
