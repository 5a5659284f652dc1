// D62 languages: a message's default title and body, and translations keyed by
// BCP 47 tag. An answer takes, per message, the translation the reader prefers
// (Accept-Language with its q-values, or a `lang` parameter that overrides it),
// `de-CH` falling back to `de`, and the default text when none is acceptable.
import Negotiator from "negotiator";
import type { ViolationList } from "../../kernel/errors.js";
import type { Translation } from "./message-store.js";

export const MAX_TRANSLATIONS = 50;
/** Longer than any tag in use (the grammar bounds subtags, not their number). */
export const TAG_MAX = 64;
/** The Accept-Language text weighed at most: a header is not a reason to work without bound. */
const ACCEPT_MAX = 1024;

/**
 * A language tag in its canonical form (`de-ch` is `de-CH`), or undefined when
 * it is not a well-formed BCP 47 tag. The structure is checked by
 * Intl.getCanonicalLocales (the Unicode BCP 47 grammar); the language need
 * not be one the registry knows.
 */
export function canonicalTag(tag: string): string | undefined {
  if (tag === "" || tag.length > TAG_MAX) return undefined;
  try {
    const [canonical] = Intl.getCanonicalLocales(tag);
    return canonical;
  } catch {
    return undefined;
  }
}

/** What a reader asked for: a `lang` parameter (already canonical) or an Accept-Language header; undefined: neither. */
export type LanguageWish = string | undefined;

/**
 * The reader's wish as one Accept-Language value: `lang` alone when given
 * (its fallbacks, de-CH to de, still apply), else the header without its `*`
 * ranges (any language is the default text's, not a translation picked at random).
 */
export function languageWish(lang: string | undefined, acceptLanguage: string | null | undefined): LanguageWish {
  if (lang !== undefined) return lang;
  if (!acceptLanguage) return undefined;
  const ranges = acceptLanguage
    .slice(0, ACCEPT_MAX)
    .split(",")
    .filter((r) => !/^\s*\*\s*(;|$)/.test(r));
  return ranges.length === 0 ? undefined : ranges.join(",");
}

/** The tag among `available` the wish prefers (negotiator: q-values, then the closer match), or undefined for the default text. */
export function chooseLanguage(available: readonly string[], wish: LanguageWish): string | undefined {
  if (wish === undefined || available.length === 0) return undefined;
  return new Negotiator({ headers: { "accept-language": wish } }).language([...available]);
}

/** Checks and cleans one text of a translation as the default's are (D62: one implementation of D17, D20); undefined with a violation. */
export type TextCheck = (field: string, kind: "title" | "body", text: string) => string | undefined;

/**
 * A write's `translations` (an object of {title, body} by BCP 47 tag; body
 * may be absent, as on create): keys canonical, at most MAX_TRANSLATIONS,
 * each text checked by `check`. Undefined (and violations naming the field)
 * when it is not one.
 */
export function translationsOf(json: unknown, check: TextCheck, v: ViolationList): Record<string, Translation> | undefined {
  if (json === null || typeof json !== "object" || Array.isArray(json))
    return void v.add("translations", "must be an object keyed by language tag");
  const entries = Object.entries(json as Record<string, unknown>);
  if (entries.length > MAX_TRANSLATIONS) return void v.add("translations", `must hold at most ${MAX_TRANSLATIONS} languages`);
  const out: Record<string, Translation> = {};
  let ok = true;
  let entryOk: boolean; // set true for each entry, false by fail()
  const fail = (field: string, message: string) => {
    v.add(field, message);
    ok = entryOk = false;
  };
  for (const [tag, value] of entries) {
    entryOk = true;
    const field = `translations.${tag}`;
    const canonical = canonicalTag(tag);
    if (canonical === undefined) {
      fail(field, "is not a BCP 47 language tag such as de or de-CH");
      continue;
    }
    if (canonical in out) {
      fail(field, `names the language of ${canonical} again`);
      continue;
    }
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      fail(field, "must be an object with title and body");
      continue;
    }
    const t = value as Record<string, unknown>;
    for (const name of Object.keys(t))
      if (name !== "title" && name !== "body") fail(`${field}.${name}`, "is not a field of a translation (title, body)");
    if (t.title === undefined) fail(`${field}.title`, "is required");
    for (const kind of ["title", "body"] as const)
      if (t[kind] !== undefined && typeof t[kind] !== "string") fail(`${field}.${kind}`, "must be a string");
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- fail() above may have cleared it
    if (!entryOk) continue;
    const title = check(`${field}.title`, "title", t.title as string);
    const body = t.body === undefined ? "" : check(`${field}.body`, "body", t.body as string);
    if (title === undefined || body === undefined) ok = false;
    else out[canonical] = { title, body };
  }
  return ok ? out : undefined;
}
