// <meridian-banner feature="orders" api-key="..."> (or token="..."; server="https://..."
// for another origin; data-state tells connecting, live or refused, and the
// console why it was refused): the active feature status messages of a
// feature (and the global ones), live
// (D46 stream, reconnecting after a drop), styled by severity, each
// dismissible until it changes (D49). No dependency, no inline script or
// style, and Trusted Types ready: a message's body (sanitised by the server
// already) is parsed once through a <template> and checked again against the
// allowlist here before it is shown; nothing is ever concatenated into HTML.
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

const CSS = `
:host { display: block; font: inherit; }
.message { display: flex; gap: .75em; align-items: flex-start; padding: .6em .9em; margin: 0 0 .4em; border-radius: 4px; border-left: 4px solid; }
.Critical { background: #fde8e8; border-color: #c81e1e; color: #611; }
.Warning { background: #fdf6b2; border-color: #c27803; color: #633; }
.Informational { background: #e1effe; border-color: #1c64f2; color: #123; }
.text { flex: 1; }
.title { font-weight: 600; }
.body p { margin: .2em 0; }
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

/** What dismissing remembers: the message as it is now (a change shows it again). */
function dismissalKey(m) {
  return `meridian-banner:${m.id}:${m.type}:${m.title}:${m.body}:${m.startDate}:${m.expiringDate}`;
}

class MeridianBanner extends HTMLElement {
  #root = this.attachShadow({ mode: "open" });
  #abort;
  #lastEventId;
  #messages = [];

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

  async #read(signal) {
    const feature = this.getAttribute("feature");
    const base = this.getAttribute("server") ?? "";
    const stream = feature ? `/api/admin/feature/${encodeURIComponent(feature)}/message/stream` : "/api/admin/feature/message/stream";
    // D61: the messages of this page; D62: in the reader's languages, in navigator.languages order.
    const path = `${stream}?path=${encodeURIComponent(location.pathname)}`;
    const headers = { accept: "text/event-stream", "accept-language": acceptLanguage(navigator.languages) };
    const key = this.getAttribute("api-key");
    const token = this.getAttribute("token");
    if (key) headers["svc-open-api-key"] = key;
    if (token) headers.authorization = `Bearer ${token}`;
    if (this.#lastEventId) headers["last-event-id"] = this.#lastEventId;
    this.dataset.state = "connecting";
    let res;
    try {
      res = await fetch(base + path, { headers, signal, cache: "no-store" });
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

  #render() {
    const shown = this.#messages
      .filter((m) => localStorage.getItem(dismissalKey(m)) === null)
      .sort((a, b) => (SEVERITY[a.type] ?? 9) - (SEVERITY[b.type] ?? 9));
    const items = shown.map((m) => {
      const box = document.createElement("div");
      box.className = `message ${m.type in SEVERITY ? m.type : "Informational"}`;
      box.setAttribute("role", m.type === "Critical" ? "alert" : "status");
      box.dataset.id = String(m.id);
      const text = document.createElement("div");
      text.className = "text";
      const title = document.createElement("div");
      title.className = "title";
      title.textContent = m.title;
      if (m.language) text.lang = m.language; // D62: screen readers speak it in its language
      const body = document.createElement("div");
      body.className = "body";
      body.append(bodyFragment(m.body));
      text.append(title, body);
      const close = document.createElement("button");
      close.type = "button";
      close.textContent = "\u00d7";
      close.setAttribute("aria-label", `Dismiss: ${m.title}`);
      close.addEventListener("click", () => {
        localStorage.setItem(dismissalKey(m), "1");
        this.#render();
      });
      box.append(text, close);
      return box;
    });
    this.#root.replaceChildren(...items);
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
