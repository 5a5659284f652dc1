// One message at a time: found in its scope (a message of another feature, or
// of the other kind, is a 404), created, updated by merging (D16) and deleted,
// conditionally on the caller's ETag when one is sent (D47).
import type { HandlerContext } from "@connectrpc/connect";
import type { Message, MessageFields } from "../../gen/meridian/featurestatus/v1/feature_status_pb.js";
import { failure, notFound } from "../../kernel/errors.js";
import { authorizeRead, authorizeWrite, checkScope, type Scope } from "./access.js";
import { ifMatch, messageEtag, stale } from "./etags.js";
import { merged, newMessage } from "./message-input.js";
import { toMessage } from "./message-protos.js";
import type { MessageRecord, MessageStore } from "./message-store.js";
import type { MessageWrites } from "./message-writes.js";
import type { Sanitizer } from "./sanitize.js";
import { EDITING, sees, type View } from "../listings/reader-view.js";

const MERGE_ATTEMPTS = 5; // an unconditional update merged again when others keep writing the message

export class MessageEdits {
  constructor(
    private readonly store: Pick<MessageStore, "get">,
    private readonly writes: MessageWrites,
    private readonly sanitizer: Sanitizer,
  ) {}

  /**
   * One message by id, for whoever may list its scope (D13), as `view` reads
   * it: an editor's view (BackOffice) gets the stored message with its ETag
   * (D62); any other reader what its listing would show it (D61): a message
   * not for its audiences is not found (on any page: a read by id names
   * none), and it comes without targeting, in its language; its ETag is the
   * caller's to set (readerEtag), once the answer is what it sends.
   */
  async get(ctx: HandlerContext, scope: Scope, messageId: number, view: View): Promise<Message> {
    authorizeRead(ctx, scope);
    const row = await this.visible(scope, messageId, view);
    return view.full ? answer(ctx, row) : toMessage(row, view);
  }

  async create(ctx: HandlerContext, scope: Scope, fields: MessageFields | undefined): Promise<Message> {
    const actor = authorizeWrite(ctx);
    checkScope(scope);
    return answer(ctx, await this.writes.create(newMessage(scope, fields, this.sanitizer), actor));
  }

  async update(
    ctx: HandlerContext,
    scope: Scope,
    messageId: number,
    fields: MessageFields | undefined,
    etag: string | undefined,
  ): Promise<Message> {
    const actor = authorizeWrite(ctx);
    const condition = ifMatch(etag ?? ctx.requestHeader.get("if-match"));
    // The write applies to the version it was merged from (D47): when another writer came
    // between, an unconditional update merges again from the new version; a conditional one is a 412.
    for (let attempt = 0; attempt < MERGE_ATTEMPTS; attempt++) {
      const existing = await this.find(scope, messageId);
      if (condition && !condition(existing)) throw stale(existing);
      const written = await this.writes.update(existing, merged(existing, fields, this.sanitizer), actor);
      if (written) return answer(ctx, written);
    }
    throw failure("WRITE_CONFLICT", `message ${messageId} kept changing while it was being updated; retry`);
  }

  async delete(ctx: HandlerContext, scope: Scope, messageId: number, etag: string | undefined): Promise<object> {
    const actor = authorizeWrite(ctx);
    const condition = ifMatch(etag ?? ctx.requestHeader.get("if-match"));
    const existing = await this.find(scope, messageId);
    if (!condition) {
      await this.writes.delete(messageId, undefined, actor);
      return {};
    }
    if (!condition(existing)) throw stale(existing);
    // Deleted only at the version just checked; if it moved on meanwhile, say how it is now.
    if (!(await this.writes.delete(messageId, existing.version, actor))) throw stale(await this.find(scope, messageId));
    return {};
  }

  /** The message, if it belongs to this scope and the view reads it (D61: as its listing would; on any page). */
  async visible(scope: Scope, messageId: number, view: View): Promise<MessageRecord> {
    const row = await this.find(scope, messageId);
    if (!sees({ ...view, path: undefined }, row)) throw missing(scope, messageId);
    return row;
  }

  /** The message, if it belongs to this scope. */
  async find(scope: Scope, messageId: number): Promise<MessageRecord> {
    checkScope(scope);
    const row = messageId > 0 ? await this.store.get(messageId) : undefined;
    if (row?.featureId !== scope) throw missing(scope, messageId);
    return row;
  }
}

function missing(scope: Scope, messageId: number) {
  return notFound(scope === null ? `no global message ${messageId}` : `no message ${messageId} for feature ${scope}`, "MESSAGE_NOT_FOUND");
}

/** A message as answered, with its ETag (D47): as stored, to an editor (D62: the default text and every translation). */
function answer(ctx: HandlerContext, row: MessageRecord): Message {
  ctx.responseHeader.set("etag", messageEtag(row));
  return toMessage(row, EDITING);
}
