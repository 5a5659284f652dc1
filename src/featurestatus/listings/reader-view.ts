// Who reads a listing or a stream, and how it is answered (D61, D62): the
// audiences whose messages it sees, the page it is on, the language it
// prefers, and whether it sees targeting and translations (BackOffice).
import type { HandlerContext } from "@connectrpc/connect";
import { ROLES, hasRole, principalOf, type Principal } from "../../auth/principal.js";
import { permissionDenied, ViolationList } from "../../kernel/errors.js";
import { canonicalTag, languageWish, type LanguageWish } from "../messages/languages.js";
import type { MessageRecord } from "../messages/message-store.js";
import { audienceProblem } from "../../kernel/audiences.js";
import { audienceMatches, pathMatches, pathProblem } from "../messages/targeting.js";

/** What a listing or stream request says of its reader. */
export interface ReaderParams {
  path?: string;
  lang?: string;
  /** BackOffice only: read as these audiences would. */
  audience: string[];
}

export interface View {
  /** "all": every message (BackOffice, unfiltered); else these audiences' messages, sorted. */
  audiences: readonly string[] | "all";
  /** The page path asked for; undefined: every page's messages. */
  path?: string;
  wish: LanguageWish;
  /** BackOffice: the messages' audiences, paths and translations too. */
  full: boolean;
}

/** How editors read the stored message (reads by id, write answers, the audit trail): the default text and everything. */
export const EDITING: View = { audiences: "all", wish: undefined, full: true };

/**
 * The view of a caller and its request. A BackOffice caller sees every
 * message, or what the audiences it names see; anyone else sees what its own
 * audiences see and may not name others (403). Bad parameters are a 400 naming them.
 */
export function readerView(principal: Principal, backOffice: boolean, r: ReaderParams, acceptLanguage: string | null): View {
  if (r.audience.length > 0 && !backOffice) throw permissionDenied("filtering by audience is for the BackOffice role");
  const v = new ViolationList();
  for (const a of r.audience) {
    const problem = audienceProblem(a);
    if (problem) v.add("audience", problem);
  }
  const pathIssue = r.path === undefined ? undefined : pathProblem(r.path);
  if (pathIssue) v.add("path", pathIssue);
  const asked = r.lang === undefined || r.lang === "" ? undefined : r.lang;
  const lang = asked === undefined ? undefined : canonicalTag(asked);
  if (asked !== undefined && lang === undefined) v.add("lang", "must be a BCP 47 language tag such as de or de-CH");
  v.throwIfAny();
  const sorted = (names: readonly string[]) => [...new Set(names)].sort();
  const audiences = !backOffice ? sorted(principal.audiences ?? []) : r.audience.length > 0 ? sorted(r.audience) : "all";
  return { audiences, path: r.path, wish: languageWish(lang, acceptLanguage), full: backOffice };
}

/** The view of a request's caller (D61, D62): its principal, its parameters and its Accept-Language. */
export function readerViewOf(ctx: HandlerContext, r: ReaderParams): View {
  const principal = principalOf(ctx);
  return readerView(principal, hasRole(principal, ROLES.backOffice), r, ctx.requestHeader.get("accept-language"));
}

/**
 * D62: says which languages an answer's messages are in (Content-Language;
 * none when every one is in its default text) and that a cache must keep one
 * answer per Accept-Language (Vary).
 */
export function sayLanguages(ctx: HandlerContext, messages: readonly { language?: string }[]): void {
  const languages = [...new Set(messages.flatMap((m) => (m.language === undefined ? [] : [m.language])))];
  if (languages.length > 0) ctx.responseHeader.set("content-language", languages.join(", "));
  ctx.responseHeader.set("vary", "accept-language");
}

/** The cache's name of a view: views that answer alike share it. */
export function viewKey(view: View): string {
  return JSON.stringify([view.audiences, view.path ?? null, view.wish ?? null, view.full]);
}

/** Whether the view reads the message at all (D61): one of its audiences, and a page of its globs. */
export function sees(view: View, row: MessageRecord): boolean {
  return (view.audiences === "all" || audienceMatches(row.audiences, view.audiences)) && pathMatches(row.paths, view.path);
}

/** Whether the view leaves out any message (so a page may need more rows than its size). */
export function filters(view: View): boolean {
  return view.audiences !== "all" || view.path !== undefined;
}
