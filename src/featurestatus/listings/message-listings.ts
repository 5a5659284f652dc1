// Listing pages (D19, D21), from the listing cache while nothing may have
// changed them (D43, D51), each with its ETag (D47).
import { create, toBinary } from "@bufbuild/protobuf";
import { ListMessagesResponseSchema, type ListMessagesResponse } from "../../gen/meridian/featurestatus/v1/feature_status_pb.js";
import type { CursorSeal } from "../../kernel/cursor-seal.js";
import type { Scope } from "../messages/access.js";
import { listingEtag } from "../messages/etags.js";
import { ListingCache } from "./listing-cache.js";
import { issueListingCursor, listingBinding, openListingCursor } from "./listing-cursor.js";
import { listingOf, type ListParams } from "./listing-params.js";
import type { MessageStore } from "../messages/message-store.js";
import { toMessage } from "../messages/message-protos.js";
import { filters, sees, viewKey, type View } from "./reader-view.js";
import { sortKeyOf, type MessageRecord } from "../messages/message-store.js";
import { DEFAULT_LIMIT } from "./listing-params.js";

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

  /**
   * A listing page as `view` reads it (D61, D62), from the cache when it is
   * current: each view is a listing of its own there, every audience and
   * language its own pages. The cursor is bound to the listing, not the view:
   * a position in it means the same whoever reads.
   */
  page(scope: Scope, view: View, p: ListParams): Promise<ListMessagesResponse> {
    const listing = listingOf(p);
    const binding = listingBinding(scope, listing);
    const at = this.now();
    return this.cache.get(`${binding}|${viewKey(view)}|${listing.limit}|${p.cursor ?? ""}`, at, async () => {
      let after = openListingCursor(this.cursors, binding, p.cursor);
      // One row more than asked tells whether another page follows. Rows the view does not see (D61)
      // are skipped: the store is read on from the last row until the page is full or the rows end.
      const { expiry, sortBy, sortOrder, limit } = listing;
      const batch = filters(view) ? Math.max(limit + 1, DEFAULT_LIMIT) : limit + 1;
      const seen: MessageRecord[] = [];
      for (;;) {
        const rows = await this.store.list({ featureId: scope, expiry, sortBy, sortOrder, after, limit: batch, now: at });
        for (const r of rows) if (sees(view, r)) seen.push(r);
        if (seen.length > limit || rows.length < batch) break;
        const end = rows[rows.length - 1];
        after = { key: sortKeyOf(end, sortBy), id: end.id };
      }
      const more = seen.length > limit;
      const page = seen.slice(0, limit);
      return create(ListMessagesResponseSchema, {
        data: page.map((row) => toMessage(row, view)),
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
  for (const m of p.data) {
    chars += m.title.length + m.body.length + (m.featureId?.length ?? 0) + 140;
    for (const s of [...m.audiences, ...m.paths]) chars += s.length + 4;
    for (const [tag, t] of Object.entries(m.translations)) chars += tag.length + t.title.length + t.body.length + 40;
  }
  return 4 * chars + 256 * p.data.length;
}
