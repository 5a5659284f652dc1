// Public keys (D60): keys made to sit in a page's HTML, where anyone can read
// them. Such a key grants one capability, reading the active messages of its
// features and the global ones (listings, live streams, feeds), and nothing
// else: every method that does not say it serves the capability refuses it,
// so a method added later is closed to public keys until it says otherwise.
// With origins, it serves only pages of those origins (the Origin header a
// browser sends; a script elsewhere can send any, so this keeps other sites'
// pages from using a copied key, not a determined caller).
import type { DescMethod } from "@bufbuild/protobuf";
import { AUDIENCE_RULE, audienceProblem } from "../kernel/audiences.js";
import { failure } from "../kernel/errors.js";
import { OPAQUE_ID_RULE, isOpaqueId } from "../kernel/ids.js";
import type { Principal, PublicKeyLimits } from "./principal.js";

/** The one thing a public key may do: read the active messages (NonExpired), their streams and feeds, of its features and the global ones. */
export const READ_ACTIVE_MESSAGES = "read-active-messages";

export function isPublicKey(p: Principal): p is Principal & { publicKey: PublicKeyLimits } {
  return p.publicKey !== undefined;
}

/** The name the gate knows a method by. */
function methodName(m: DescMethod): string {
  return `${m.parent.typeName}/${m.name}`;
}

/**
 * The methods that serve READ_ACTIVE_MESSAGES, each of which checks the scope
 * it reads with requireActiveReader. Every other method refuses public keys.
 */
export class PublicKeyGate {
  private readonly open = new Set<string>();

  constructor(methods: Iterable<DescMethod> = []) {
    for (const m of methods) this.open.add(methodName(m));
  }

  /** The 403 for a public key calling `method` from `origin` (the Origin header), or undefined when it may. Private credentials pass. */
  refusal(p: Principal, method: DescMethod, origin: string | undefined) {
    if (!isPublicKey(p)) return undefined;
    if (!originAdmitted(p.publicKey, origin)) {
      return failure(
        "ORIGIN_NOT_ALLOWED",
        `this public key serves pages of ${p.publicKey.origins.join(", ")} only; the request's Origin is ${origin ?? "absent"}`,
      );
    }
    if (!this.open.has(methodName(method))) {
      return failure("PUBLIC_KEY_NOT_ALLOWED", `a public key may not call ${method.name}: it reads only active messages and their streams`);
    }
    return undefined;
  }
}

/** Whether a public key serves a page of `origin`: any, when it names none. A request with no Origin is from no page the key names. */
export function originAdmitted(limits: PublicKeyLimits, origin: string | undefined): boolean {
  return limits.origins.length === 0 || (origin !== undefined && limits.origins.includes(origin));
}

/**
 * READ_ACTIVE_MESSAGES for `scope` (a feature id, or null for the global
 * messages): a public key reads only its own features. Other credentials
 * pass; their own rules (D13) apply.
 */
export function requireActiveReader(p: Principal, scope: string | null): void {
  if (isPublicKey(p) && scope !== null && !p.publicKey.features.includes(scope)) {
    throw failure(
      "PUBLIC_KEY_NOT_ALLOWED",
      `this public key reads the messages of ${p.publicKey.features.join(", ")} only, not of ${scope}`,
    );
  }
}

/** The refusal of anything but the active messages to a public key (a listing of Pending, Expired or All). */
export function onlyActive(p: Principal, what: string): void {
  if (isPublicKey(p)) throw failure("PUBLIC_KEY_NOT_ALLOWED", `a public key reads only the active messages, not ${what}`);
}

/** Why `id` cannot be a public key's feature, or undefined when it can. */
export function featureIdProblem(id: string): string | undefined {
  return isOpaqueId(id) ? undefined : `"${id}" is not a feature id: ${OPAQUE_ID_RULE}`;
}

/** Why `audience` cannot be one of a key's audiences (the rule of a message's, D61), or undefined when it can. */
export function keyAudienceProblem(audience: string): string | undefined {
  return audienceProblem(audience) === undefined ? undefined : `"${audience}" is not an audience: ${AUDIENCE_RULE}`;
}
