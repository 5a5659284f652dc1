// D63 feeds: active messages as an Atom 1.0 document (RFC 4287). Text is
// escaped by the entities library (the one sanitize-html's parser uses), and
// characters XML 1.0 cannot hold at all are dropped, so any stored title or
// body makes a well-formed document.
import { escapeUTF8 } from "entities";

export const ATOM_CONTENT_TYPE = "application/atom+xml; charset=utf-8";

export interface AtomEntry {
  id: string;
  title: string;
  /** Epoch milliseconds. */
  updated: number;
  published?: number;
  /** HTML (already sanitised), sent as content type="html". */
  html: string;
  category?: string;
  /** D62: the BCP 47 tag of the entry's title and content (xml:lang); undefined: the message's default text, whose language is not recorded. */
  lang?: string;
}

export interface AtomFeed {
  id: string;
  title: string;
  /** Epoch milliseconds: the latest entry's, or now when there is none. */
  updated: number;
  author: string;
  entries: AtomEntry[];
}

// XML 1.0's Char production: tab, newline, carriage return, and the rest above the controls but the surrogates, FFFE and FFFF.
const NOT_XML_CHAR = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

export function xmlText(s: string): string {
  return escapeUTF8(s.replace(NOT_XML_CHAR, ""));
}

/** RFC 3339 as Atom dates are written. */
function date(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

export function atomFeed(feed: AtomFeed): string {
  const out = [
    '<?xml version="1.0" encoding="utf-8"?>',
    '<feed xmlns="http://www.w3.org/2005/Atom">',
    `  <id>${xmlText(feed.id)}</id>`,
    `  <title>${xmlText(feed.title)}</title>`,
    `  <updated>${date(feed.updated)}</updated>`,
    `  <author><name>${xmlText(feed.author)}</name></author>`,
  ];
  for (const e of feed.entries) {
    out.push(
      e.lang === undefined ? "  <entry>" : `  <entry xml:lang="${xmlText(e.lang)}">`,
      `    <id>${xmlText(e.id)}</id>`,
      `    <title type="text">${xmlText(e.title)}</title>`,
      `    <updated>${date(e.updated)}</updated>`,
      ...(e.published === undefined ? [] : [`    <published>${date(e.published)}</published>`]),
      ...(e.category === undefined ? [] : [`    <category term="${xmlText(e.category)}"/>`]),
      `    <content type="html">${xmlText(e.html)}</content>`,
      "  </entry>",
    );
  }
  out.push("</feed>", "");
  return out.join("\n");
}
