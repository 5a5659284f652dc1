// D62 languages: a message's default title and body, and translations keyed by
// BCP 47 tag. An answer takes, per message, the translation the reader prefers
// (Accept-Language with its q-values, or a `lang` parameter that overrides it),
// `de-CH` falling back to `de`, and the default text when none is acceptable.
import Negotiator from "negotiator";

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
