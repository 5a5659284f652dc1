// D20. The body keeps the spec's allowlist only; the title becomes plain text.
// Two independent layers: sanitize-html cleans, then parse5 (an HTML parser
// that sees markup as a browser does) checks the result against the same
// allowlist. A body that fails the check is refused, never stored.
import sanitizeHtml from "sanitize-html";
import { decodeHTML } from "entities";
import { parseFragment } from "parse5";

/**
 * D20: the body's HTML subset, each element with the attributes it may keep
 * (an href only with an allowed scheme). The one list: the banner
 * (ui/meridian-banner.js) keeps a copy, pinned equal to it by a test
 * (test/ui/allowlist.test.ts), and the tests read it from here.
 */
export const BODY_ALLOWLIST: Readonly<Record<string, readonly string[]>> = {
  b: [],
  strong: [],
  i: [],
  em: [],
  u: [],
  br: [],
  p: [],
  ul: [],
  ol: [],
  li: [],
  a: ["href"],
};

/** The attributes an element may keep, or undefined when the element is not allowed. */
export function allowedAttributes(tag: string): readonly string[] | undefined {
  return Object.hasOwn(BODY_ALLOWLIST, tag) ? BODY_ALLOWLIST[tag] : undefined;
}

// Elements whose content is dropped with them rather than kept as text.
const DROP_WITH_CONTENT = [
  "script",
  "style",
  "textarea",
  "xmp",
  "noscript",
  "template",
  "svg",
  "math",
  "iframe",
  "noembed",
  "noframes",
  "object",
  "embed",
  "title",
  "head",
  "option",
  "select",
  "plaintext",
];

export interface SanitizeOptions {
  allowHttpLinks: boolean;
}

export class Sanitizer {
  private readonly schemes: Set<string>;
  private readonly bodyOptions: sanitizeHtml.IOptions;
  private readonly titleOptions: sanitizeHtml.IOptions;

  constructor(opts: SanitizeOptions) {
    this.schemes = new Set(opts.allowHttpLinks ? ["https:", "mailto:", "http:"] : ["https:", "mailto:"]);
    this.bodyOptions = {
      allowedTags: Object.keys(BODY_ALLOWLIST),
      allowedAttributes: Object.fromEntries(Object.entries(BODY_ALLOWLIST).filter(([, attributes]) => attributes.length > 0)) as Record<
        string,
        string[]
      >,
      allowedSchemes: [...this.schemes].map((s) => s.slice(0, -1)),
      allowedSchemesAppliedToAttributes: ["href"],
      allowProtocolRelative: false,
      allowedSchemesByTag: {},
      disallowedTagsMode: "discard",
      nonTextTags: DROP_WITH_CONTENT,
      allowVulnerableTags: false,
      parseStyleAttributes: false,
      // Relative hrefs are not covered by allowedSchemes: judge every href here, as a browser parses it.
      transformTags: {
        a: (tagName, attribs) => {
          const out: Record<string, string> = {};
          const href = attribs.href as string | undefined; // an <a> may have none
          if (href !== undefined && this.hrefAllowed(href)) out.href = href;
          return { tagName, attribs: out };
        },
      },
    };
    this.titleOptions = { allowedTags: [], allowedAttributes: {}, disallowedTagsMode: "discard", nonTextTags: DROP_WITH_CONTENT };
  }

  /** Only absolute URLs with an allowed scheme, parsed by the WHATWG URL parser browsers use. */
  hrefAllowed(href: string): boolean {
    try {
      return this.schemes.has(new URL(href).protocol);
    } catch {
      return false; // relative, protocol-relative or malformed
    }
  }

  /**
   * The cleaned body, or undefined when the cleaned text still fails the
   * independent check. Cleaning repeats until it changes nothing, so what is
   * stored, read and sent back is stored again as it was (D52): one pass can
   * leave markup that the next parse nests differently (<li> inside <li>).
   * Each pass only drops or normalises, so the fixed point comes in a pass or
   * two; a body that has not settled within the cap is refused.
   */
  body(html: string): string | undefined {
    let clean = sanitizeHtml(stripControls(html), this.bodyOptions);
    for (let round = 1; ; round++) {
      const again = sanitizeHtml(clean, this.bodyOptions);
      if (again === clean) return this.bodyAllowed(clean) ? clean : undefined;
      if (round === BODY_ROUNDS) return undefined;
      clean = again;
    }
  }

  /**
   * Plain text, or undefined when the title cannot be made plain. A round
   * removes markup and decodes one level of character references, or, when
   * that changes nothing, removes whatever could still open a tag; rounds
   * repeat until nothing changes, so
   * encoded markup at any depth is reached. A round that changes the text
   * shortens it, so a title converges in fewer rounds than it has characters;
   * the cap bounds the work whatever happens. A "<" or "&" that forms no tag
   * stays a character.
   */
  title(text: string): string | undefined {
    let current = text;
    for (let round = 0; round < TITLE_ROUNDS; round++) {
      let next = decodeHTML(sanitizeHtml(stripControls(current), this.titleOptions));
      // Once markup and references are gone, what still looks like a tag's start goes (and is looked at again).
      if (next === current) next = stripTagOpeners(current).trim();
      if (next === current) return titlePlain(current) ? current : undefined;
      current = next;
    }
    return undefined;
  }

  /** The independent check: every element and attribute within the allowlist, no comment. */
  bodyAllowed(html: string): boolean {
    const stack: unknown[] = [parseFragment(html)];
    while (stack.length) {
      const node = stack.pop() as {
        nodeName: string;
        tagName?: string;
        namespaceURI?: string;
        attrs?: { name: string; value: string }[];
        childNodes?: unknown[];
        content?: unknown;
      };
      if (node.nodeName === "#comment" || node.nodeName === "#documentType") return false;
      if (node.tagName !== undefined) {
        const attributes = allowedAttributes(node.tagName);
        if (attributes === undefined || node.namespaceURI !== "http://www.w3.org/1999/xhtml") return false;
        for (const a of node.attrs ?? []) {
          if (!attributes.includes(a.name) || (a.name === "href" && !this.hrefAllowed(a.value))) return false;
        }
      }
      if (node.content) stack.push(node.content);
      for (const c of node.childNodes ?? []) stack.push(c);
    }
    return true;
  }
}

/** Passes of Sanitizer.body after the first before a body that still changes is refused. */
const BODY_ROUNDS = 4;

/** Rounds of Sanitizer.title: a depth of encoding takes at least 3 characters (&amp; to &), and a title is at most 255 characters as read (D17). */
const TITLE_ROUNDS = 256;

/**
 * The independent check of a title: nothing left to decode, so every decoding
 * of it is itself, and an HTML parser finds text only in it, no element and no
 * comment.
 */
function titlePlain(title: string): boolean {
  if (decodeHTML(title) !== title) return false;
  const stack: unknown[] = [parseFragment(title)];
  while (stack.length) {
    const node = stack.pop() as { nodeName: string; childNodes?: unknown[] };
    if (node.nodeName !== "#document-fragment" && node.nodeName !== "#text") return false;
    for (const c of node.childNodes ?? []) stack.push(c);
  }
  return true;
}

/** A "<" a browser could read as the start of a tag, comment or processing instruction; a run of them goes whole, so that none is left before the letter. */
function stripTagOpeners(s: string): string {
  return s.replace(/<+(?=[A-Za-z!/?])/g, "");
}

/** NUL and other C0 controls but tab, newline and carriage return: they only serve to hide markup. */
function stripControls(s: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what it removes
  return s.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/g, "");
}
