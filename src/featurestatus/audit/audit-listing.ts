// D48 the audit trail as read: BackOffice's, newest first, filtered by
// message, feature, client and time, paged by a cursor (D21).
import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import {
  ListMessageAuditResponseSchema,
  type ListMessageAuditRequest,
  type ListMessageAuditResponse,
} from "../../gen/meridian/featurestatus/v1/feature_status_pb.js";
import type { CursorSeal } from "../../kernel/cursor-seal.js";
import { authorizeAudit } from "../messages/access.js";
import type { AuditQuery } from "./audit.js";
import { auditBinding, issueAuditCursor, openAuditCursor } from "../listings/listing-cursor.js";
import { auditParamsOf } from "../listings/listing-params.js";
import type { MessageStore } from "../messages/message-store.js";
import { toAuditEntry } from "../messages/message-protos.js";

export async function auditPage(
  ctx: HandlerContext,
  req: ListMessageAuditRequest,
  store: MessageStore,
  cursors: CursorSeal,
): Promise<ListMessageAuditResponse> {
  authorizeAudit(ctx);
  const { from, to, limit } = auditParamsOf(req);
  const query: AuditQuery = { messageId: req.messageId, featureId: req.featureId, clientId: req.clientId, limit: limit + 1 };
  if (from !== undefined) query.from = from * 1000;
  if (to !== undefined) query.to = to * 1000 + 999; // the whole last second
  const binding = auditBinding(req);
  const beforeId = openAuditCursor(cursors, binding, req.cursor);
  if (beforeId !== undefined) query.beforeId = beforeId;
  const rows = await store.listAudit(query);
  const page = rows.slice(0, limit);
  return create(ListMessageAuditResponseSchema, {
    data: page.map(toAuditEntry),
    cursor: rows.length > limit ? issueAuditCursor(cursors, binding, page[page.length - 1].id) : undefined,
  });
}
