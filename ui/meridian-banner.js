// <meridian-banner feature="orders" api-key="..."> (or token="..."; server="https://..."
// for another origin; lang="de" to choose the language over the browser's;
// data-state tells connecting, live or refused, and the console why it was
// refused): the active feature status
// messages of a feature (and the global ones) for this page (path, D61) in the
// reader's languages (D62), live (D46 stream, reconnecting after a drop),
// styled by severity, the most severe first and the others behind "N more"
// when there are more than two. Each is dismissible until it changes (D49):
// signed in with a token, on the server, so that the dismissal follows the
// person to every device (D63); with an API key, in this browser. No
// dependency, no inline script or style, and Trusted Types ready: a message's
// body (sanitised by the server already) is parsed once through a <template>
// and checked again against the allowlist here before it is shown; nothing is
// ever concatenated into HTML.
/**
 * The server's allowlist (BODY_ALLOWLIST of src/featurestatus/sanitize.ts):
 * each element with the attributes it may keep. A copy, as this file is served
 * as it is and depends on nothing; test/ui/allowlist.test.ts pins it equal.
 */
export const BODY_ALLOWLIST = {
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
/** By tagName as an HTML document spells it (upper case): an SVG or MathML element of the same name is not one of them. */
const ALLOWED = new Map(Object.entries(BODY_ALLOWLIST).map(([tag, attributes]) => [tag.toUpperCase(), attributes]));
const SEVERITY = { Critical: 0, Warning: 1, Informational: 2 };

/** The banner's own words, by language (D62); English when none of the reader's languages is here. */
export const STRINGS = {
  en: { dismiss: "Dismiss: {title}", more: "{n} more", less: "Show fewer", until: "Until {date}" },
  de: { dismiss: "Ausblenden: {title}", more: "{n} weitere", less: "Weniger anzeigen", until: "Bis {date}" },
};
/** Shown before "N more": with more than this many messages the others wait behind it. */
const SHOWN_AT_ONCE = 2;

const CSS = `
:host { display: block; font: inherit; }
.message { display: flex; gap: .75em; align-items: flex-start; padding: .6em .9em; margin: 0 0 .4em; border-radius: 4px; border-left: 4px solid; }
.Critical { background: #fde8e8; border-color: #c81e1e; color: #611; }
.Warning { background: #fdf6b2; border-color: #c27803; color: #633; }
.Informational { background: #e1effe; border-color: #1c64f2; color: #123; }
.text { flex: 1; }
.title { font-weight: 600; }
.body p { margin: .2em 0; }
.date { font-size: .85em; opacity: .8; }
.more { font-size: .9em; text-decoration: underline; padding: .2em .9em; }
.rest[hidden] { display: none; }
button { background: none; border: 0; font: inherit; font-size: 1.2em; line-height: 1; cursor: pointer; color: inherit; }
button:focus-visible { outline: 2px solid currentColor; outline-offset: 2px; }
`;

// One policy for the one place HTML is parsed (the template); with Trusted
// Types enforced the page's CSP names it: trusted-types meridian-banner.
const policy = globalThis.trustedTypes?.createPolicy("meridian-banner", { createHTML: (html) => html }) ?? { createHTML: (html) => html };

let sheet;
function styles() {
  if (!sheet) {
    sheet = new CSSStyleSheet();
    sheet.replaceSync(CSS);
  }
  return sheet;
}

/** The body's nodes, keeping only allowlisted elements (their text otherwise) and https/mailto links (the console's preview uses it too). */
export function bodyFragment(html) {
  const template = document.createElement("template");
  template.innerHTML = policy.createHTML(html);
  const clean = (parent) => {
    for (const node of [...parent.childNodes]) {
      if (node.nodeType === Node.TEXT_NODE) continue;
      if (node.nodeType !== Node.ELEMENT_NODE || !ALLOWED.has(node.tagName)) {
        node.replaceWith(...(node.nodeType === Node.ELEMENT_NODE ? [document.createTextNode(node.textContent ?? "")] : []));
        continue;
      }
      for (const attr of [...node.attributes]) {
        const keep =
          ALLOWED.get(node.tagName).includes(attr.name) && (attr.name !== "href" || /^(https:|mailto:)/i.test(attr.value.trim()));
        if (!keep) node.removeAttribute(attr.name);
      }
      if (node.tagName === "A") node.setAttribute("rel", "noopener noreferrer");
      clean(node);
    }
  };
  clean(template.content);
  return document.importNode(template.content, true);
}

/** navigator.languages as an Accept-Language value: each next one a little less preferred (D62). */
function acceptLanguage(languages) {
  const list = (languages ?? []).filter((l) => /^[A-Za-z0-9-]+$/.test(l)).slice(0, 10);
  return list.map((l, i) => (i === 0 ? l : `${l};q=${(1 - i / 10).toFixed(1)}`)).join(", ") || "*";
}

/**
 * What dismissing remembers: the message at its version, as the server keeps a
 * person's dismissal (D63). Not its text: read in another language it is the
 * same message; any edit moves the version and shows it again.
 */
function dismissalKey(m) {
  return `meridian-banner:${m.id}:v${m.version}`;
}

/** The reader's languages, most wanted first: the element's lang, then the browser's (D62). */
function readerLanguages(element) {
  const own = element.getAttribute("lang");
  return [...(own ? [own] : []), ...(navigator.languages.length > 0 ? navigator.languages : [navigator.language])].filter(Boolean);
}

/** The banner's strings in the first of the reader's languages that STRINGS has (de-CH: de). */
export function stringsFor(languages) {
  for (const tag of languages) {
    const base = tag.toLowerCase().split("-")[0];
    if (base in STRINGS) return STRINGS[base];
  }
  return STRINGS.en;
}

function fill(text, values) {
  return text.replace(/\{(\w+)\}/g, (_, name) => String(values[name]));
}

class MeridianBanner extends HTMLElement {
  #root = this.attachShadow({ mode: "open" });
  #abort;
  #lastEventId;
  #messages = [];
  /** Dismissed here while the server has not said so yet (D63), by dismissalKey. */
  #dismissedHere = new Set();
  #expanded = false;

  connectedCallback() {
    this.#root.adoptedStyleSheets = [styles()];
    this.#abort = new AbortController();
    void this.#listen(this.#abort.signal);
  }

  disconnectedCallback() {
    this.#abort?.abort();
  }

  /**
   * The stream, again after a drop, with Last-Event-ID (D46). A refusal (the
   * key, the token or this page's origin is not accepted) ends the attempts:
   * data-state="refused", and why in the console (D60).
   */
  async #listen(signal) {
    let delay = 1000;
    while (!signal.aborted) {
      try {
        await this.#read(signal);
        delay = 1000;
      } catch (e) {
        if (e instanceof Refused) {
          this.dataset.state = "refused";
          console.error(`meridian-banner: ${e.message}`);
          return;
        }
        // dropped, or the server is away: try again shortly
      }
      if (signal.aborted) return;
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(30_000, delay * 2);
    }
  }

  /** The credential's headers: an API key, or a person's token. */
  #credentials() {
    const headers = {};
    const key = this.getAttribute("api-key");
    const token = this.getAttribute("token");
    if (key) headers["svc-open-api-key"] = key;
    if (token) headers.authorization = `Bearer ${token}`;
    return headers;
  }

  async #read(signal) {
    const feature = this.getAttribute("feature");
    const base = this.getAttribute("server") ?? "";
    const route = feature ? `/api/admin/feature/${encodeURIComponent(feature)}/message/stream` : "/api/admin/feature/message/stream";
    // D61: the messages for this page; D62: in the reader's languages (lang, when the element names one, wins on the server too).
    const query = new URLSearchParams({ path: location.pathname });
    const own = this.getAttribute("lang");
    if (own) query.set("lang", own);
    const headers = { accept: "text/event-stream", "accept-language": acceptLanguage(readerLanguages(this)), ...this.#credentials() };
    if (this.#lastEventId) headers["last-event-id"] = this.#lastEventId;
    this.dataset.state = "connecting";
    let res;
    try {
      res = await fetch(`${base}${route}?${query}`, { headers, signal, cache: "no-store" });
    } catch (e) {
      if (signal.aborted) throw e;
      throw await this.#whyNoAnswer(base, e);
    }
    if (res.status === 401 || res.status === 403) throw new Refused(await refusalOf(res));
    if (!res.ok || !res.body) throw new Error(`stream: ${res.status}`);
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      text += value;
      let end;
      while ((end = text.indexOf("\n\n")) !== -1) {
        this.#event(text.slice(0, end));
        text = text.slice(end + 2);
      }
    }
  }

  #event(block) {
    let id;
    let event;
    let data = "";
    for (const line of block.split("\n")) {
      if (line.startsWith("id: ")) id = line.slice(4);
      else if (line.startsWith("event: ")) event = line.slice(7);
      else if (line.startsWith("data: ")) data += line.slice(6);
    }
    if (!data) return;
    if (event === "error") {
      // D53: the credential ended (revoked, expired); the server says why, then ends the stream.
      throw new Refused(`the server ended the stream: ${JSON.parse(data).detail}`);
    }
    this.dataset.state = "live"; // a set has arrived: what is shown is current
    this.#lastEventId = id;
    this.#messages = JSON.parse(data).data;
    this.#render();
  }

  /**
   * A fetch with no answer is either the server away or an answer this page
   * may not read (CORS: the key does not serve this origin). An opaque request
   * that needs no permission tells them apart: if it gets through, the server
   * is there and the refusal is this page's origin.
   */
  async #whyNoAnswer(base, error) {
    const server = new URL(base || location.href, location.href).origin;
    try {
      await fetch(`${server}/healthz`, { mode: "no-cors", cache: "no-store" });
    } catch {
      return error; // the server is away: try again later
    }
    return new Refused(
      `${server} answered, but not to this page: its origin ${location.origin} is not one the key serves ` +
        "(its --origin list) nor in the server's MERIDIAN_CORS_ORIGINS",
    );
  }

  /**
   * D63: with a token, the server keeps the dismissal for the person (every
   * device's stream then says dismissed); with an API key, or when the server
   * cannot keep it (a token without a subject), this browser does.
   */
  async #dismiss(m) {
    const key = dismissalKey(m);
    this.#dismissedHere.add(key);
    this.#render();
    if (this.getAttribute("token")) {
      const base = this.getAttribute("server") ?? "";
      const route = m.featureId
        ? `/api/admin/feature/${encodeURIComponent(m.featureId)}/message/${m.id}`
        : `/api/admin/feature/message/${m.id}`;
      try {
        const res = await fetch(`${base}${route}/dismissal`, { method: "POST", headers: this.#credentials() });
        if (res.ok) return;
        console.warn(`meridian-banner: the server did not keep the dismissal of message ${m.id} (${res.status}); this browser keeps it`);
      } catch (e) {
        console.warn(`meridian-banner: the dismissal of message ${m.id} did not reach the server (${String(e)}); this browser keeps it`);
      }
    }
    localStorage.setItem(key, "1");
  }

  #render() {
    const languages = readerLanguages(this);
    const words = stringsFor(languages);
    const dates = new Intl.DateTimeFormat(languages, { dateStyle: "medium", timeStyle: "short" });
    const shown = this.#messages
      .filter((m) => {
        const key = dismissalKey(m);
        // A message that may not be dismissed shows whatever was remembered of it.
        return m.dismissible === false || (!m.dismissed && !this.#dismissedHere.has(key) && localStorage.getItem(key) === null);
      })
      .sort((a, b) => (SEVERITY[a.type] ?? 9) - (SEVERITY[b.type] ?? 9));
    const items = shown.map((m) => {
      const box = document.createElement("div");
      box.className = `message ${m.type in SEVERITY ? m.type : "Informational"}`;
      box.setAttribute("role", m.type === "Critical" ? "alert" : "status");
      box.dataset.id = String(m.id);
      if (m.language) box.lang = m.language;
      const text = document.createElement("div");
      text.className = "text";
      const title = document.createElement("div");
      title.className = "title";
      title.textContent = m.title;
      if (m.language) text.lang = m.language; // D62: screen readers speak it in its language
      const body = document.createElement("div");
      body.className = "body";
      body.append(bodyFragment(m.body));
      const until = document.createElement("time");
      until.className = "date";
      until.dateTime = m.expiringDate;
      until.textContent = fill(words.until, { date: dates.format(new Date(m.expiringDate)) });
      text.append(title, body, until);
      box.append(text);
      if (m.dismissible !== false) {
        const close = document.createElement("button");
        close.type = "button";
        close.className = "dismiss";
        close.textContent = "\u00d7";
        close.setAttribute("aria-label", fill(words.dismiss, { title: m.title }));
        close.addEventListener("click", () => void this.#dismiss(m));
        box.append(close);
      }
      return box;
    });
    if (items.length <= SHOWN_AT_ONCE) {
      this.#root.replaceChildren(...items);
      return;
    }
    // The most severe at once, the others behind a real button (keyboard: Tab, then Enter or Space).
    const rest = document.createElement("div");
    rest.className = "rest";
    rest.id = "rest";
    rest.hidden = !this.#expanded;
    rest.append(...items.slice(1));
    const more = document.createElement("button");
    more.type = "button";
    more.className = "more";
    more.setAttribute("aria-controls", rest.id);
    more.setAttribute("aria-expanded", String(this.#expanded));
    more.textContent = this.#expanded ? words.less : fill(words.more, { n: items.length - 1 });
    more.addEventListener("click", () => {
      this.#expanded = !this.#expanded;
      this.#render();
      this.#root.querySelector("button.more")?.focus();
    });
    this.#root.replaceChildren(items[0], more, rest);
  }
}

/** A refusal that trying again will not change: a key, token or origin the server does not accept. */
class Refused extends Error {}

/** Why the server refused, from its problem+json (D59). */
async function refusalOf(res) {
  try {
    const problem = await res.json();
    return `the server refused the stream (${res.status} ${problem.reason}): ${problem.detail}`;
  } catch {
    return `the server refused the stream (${res.status})`;
  }
}

if (!customElements.get("meridian-banner")) customElements.define("meridian-banner", MeridianBanner);
