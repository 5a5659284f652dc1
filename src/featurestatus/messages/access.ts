// D13: who may read or write which messages. Reading (listing, one message,
// watching) needs a read scope, and outside BackOffice only the feature the
// credential was issued for; writing needs the readwrite scope and the
// BackOffice role; the audit trail is BackOffice's.
import type { HandlerContext } from "@connectrpc/connect";
import { ROLES, SCOPES, hasRole, hasScope, principalOf, type Principal } from "../../auth/principal.js";
import { isPublicKey, onlyActive, requireActiveReader } from "../../auth/public-keys.js";
import { FeatureStatusService } from "../../gen/meridian/featurestatus/v1/feature_status_pb.js";
import { MessageDeliveryService } from "../../gen/meridian/featurestatus/v1/message_delivery_pb.js";
import { invalidField, permissionDenied } from "../../kernel/errors.js";
import { OPAQUE_ID_RULE, isOpaqueId } from "../../kernel/ids.js";
import type { Actor } from "../audit/audit.js";

/** Where a message lives: one feature, or global (null). */
export type Scope = string | null;

const READ_SCOPES = [SCOPES.featureStatusRead, SCOPES.featureStatusReadWrite];
const WRITE_SCOPE = SCOPES.featureStatusReadWrite;
const BACK_OFFICE = ROLES.backOffice;

/**
 * D60: the methods that serve a public key's one capability,
 * READ_ACTIVE_MESSAGES, each through authorizeActiveRead. A method not listed
 * here refuses public keys (auth/public-keys.ts): a feed or any other read
 * that should serve pages joins this list and calls authorizeActiveRead.
 */
export const ACTIVE_MESSAGE_READS = [
  FeatureStatusService.method.listFeatureMessages,
  FeatureStatusService.method.listGlobalMessages,
  FeatureStatusService.method.watchMessages,
  FeatureStatusService.method.watchFeatureMessagesSse,
  FeatureStatusService.method.watchGlobalMessagesSse,
  MessageDeliveryService.method.getFeatureMessageFeed, // D63 feeds
  MessageDeliveryService.method.getGlobalMessageFeed,
] as const;

/**
 * READ_ACTIVE_MESSAGES (D60): the active messages of a scope, as listings of
 * `expiry` NonExpired (the default), streams and feeds. A public key reads
 * those of its features and the global ones; any other caller, what
 * authorizeRead lets it.
 */
export function authorizeActiveRead(ctx: HandlerContext, scope: Scope, expiry?: string): void {
  const principal = principalOf(ctx);
  if (!isPublicKey(principal)) return authorizeRead(ctx, scope);
  checkScope(scope);
  requireActiveReader(principal, scope);
  if (expiry && expiry.toLowerCase() !== "nonexpired") onlyActive(principal, `expiry ${expiry}`);
}

/** Who may list, read and watch a scope's messages (a public key: only its active ones, through authorizeActiveRead). */
export function authorizeRead(ctx: HandlerContext, scope: Scope): void {
  const principal = principalOf(ctx);
  onlyActive(principal, "one message by its id");
  if (!hasScope(principal, ...READ_SCOPES)) throw permissionDenied(`listing messages needs scope ${READ_SCOPES[0]}`);
  checkScope(scope);
  // Outside BackOffice, a caller lists only the feature its credential was issued for.
  if (scope !== null && !hasRole(principal, BACK_OFFICE) && principal.clientId !== scope) {
    throw permissionDenied(`client ${principal.clientId} may not list the messages of feature ${scope}`);
  }
}

/** Both the readwrite scope and the BackOffice role; returns the writer, for the audit trail. */
export function authorizeWrite(ctx: HandlerContext): Actor {
  const principal = principalOf(ctx);
  if (!hasScope(principal, WRITE_SCOPE) || !hasRole(principal, BACK_OFFICE)) {
    throw permissionDenied(`writing messages needs scope ${WRITE_SCOPE} and role ${BACK_OFFICE}`);
  }
  return actorOf(principal);
}

/** The audit trail: the BackOffice role with a read scope. */
export function authorizeAudit(ctx: HandlerContext): void {
  const principal = principalOf(ctx);
  if (!hasScope(principal, ...READ_SCOPES) || !hasRole(principal, BACK_OFFICE)) {
    throw permissionDenied(`the audit trail is for the ${BACK_OFFICE} role with scope ${READ_SCOPES[0]} or ${READ_SCOPES[1]}`);
  }
}

/** D18 for a feature scope; the global scope has no id to check. */
export function checkScope(scope: Scope): void {
  if (scope !== null && !isOpaqueId(scope)) throw invalidField("featureId", `must be ${OPAQUE_ID_RULE}`);
}

/** Who a caller is, for the audit trail (D48). */
function actorOf(p: Principal): Actor {
  return { clientId: p.clientId, keyId: p.keyId, issuer: p.issuer, subject: p.subject };
}
