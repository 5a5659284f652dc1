// D63: dismissals that follow a person. A reader signed in with a bearer
// token (a subject) dismisses a message at its current version; every device
// of that subject then reads the message as dismissed, until the message
// changes (a new version is a new message to read). API keys name no person:
// their dismissals stay in the browser.
import type { HandlerContext } from "@connectrpc/connect";
import { principalOf, type Principal } from "../../auth/principal.js";
import { failure } from "../../kernel/errors.js";

export interface DismissalStore {
  /** Records that `subject` dismissed message `messageId` at `version` (again: no change). */
  dismiss(subject: string, messageId: number, version: number): Promise<void>;
  /** The ids of the messages `subject` dismissed at the version they have now. */
  dismissedBy(subject: string): Promise<Set<number>>;
  /** Calls fn after each dismissal (on PostgreSQL, any replica's); returns the unsubscribe. */
  watch(fn: () => void): () => void;
}

/** The person a caller is, for dismissals: a token's issuer and subject; undefined for an API key. */
export function subjectOf(p: Principal): string | undefined {
  if (p.via !== "jwt" || !p.subject) return undefined;
  return JSON.stringify([p.issuer ?? "", p.subject]);
}

/** The caller's subject, or the refusal: an API key names no person to remember a dismissal for. */
export function dismissingSubject(ctx: HandlerContext): string {
  const subject = subjectOf(principalOf(ctx));
  if (subject === undefined) {
    throw failure(
      "DISMISSAL_NEEDS_SUBJECT",
      "a dismissal is stored for a person: sign in with a bearer token that has a sub claim (with an API key, keep dismissals in the browser)",
    );
  }
  return subject;
}

/** Messages as `dismissed` (a set of ids) marks them: copies of those it names, the others as they are. */
export function markDismissed<M extends { id: number; dismissed: boolean }>(messages: M[], dismissed: Set<number>): M[] {
  return messages.map((m) => (dismissed.has(m.id) ? { ...m, dismissed: true } : m));
}

/**
 * What a reader's answers mark as dismissed: nothing for an API key's caller
 * (no read at all), else the subject's dismissals of the messages as they are now.
 */
export async function dismissalsOf(ctx: HandlerContext, store: DismissalStore): Promise<Set<number>> {
  const subject = subjectOf(principalOf(ctx));
  return subject === undefined ? new Set() : store.dismissedBy(subject);
}
