// <meridian-banner feature="orders" api-key="..."> (or token="..."; server="https://..."
// for another origin; data-state tells connecting, live or refused): the
// active feature status messages of a feature (and the global ones), live
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

  /** The stream, again after a drop, with Last-Event-ID (D46). */
  async #listen(signal) {
    let delay = 1000;
    while (!signal.aborted) {
      try {
        await this.#read(signal);
        delay = 1000;
      } catch {
        // dropped, refused, or the server is away: try again shortly
      }
      if (signal.aborted) return;
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(30_000, delay * 2);
    }
  }

  async #read(signal) {
    const feature = this.getAttribute("feature");
    const base = this.getAttribute("server") ?? "";
    const path = feature ? `/api/admin/feature/${encodeURIComponent(feature)}/message/stream` : "/api/admin/feature/message/stream";
    const headers = { accept: "text/event-stream" };
    const key = this.getAttribute("api-key");
    const token = this.getAttribute("token");
    if (key) headers["svc-open-api-key"] = key;
    if (token) headers.authorization = `Bearer ${token}`;
    if (this.#lastEventId) headers["last-event-id"] = this.#lastEventId;
    this.dataset.state = "connecting";
    const res = await fetch(base + path, { headers, signal, cache: "no-store" });
    if (!res.ok || !res.body) {
      this.dataset.state = "refused";
      throw new Error(`stream: ${res.status}`);
    }
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
      this.dataset.state = "refused";
      throw new Error(`stream: ${JSON.parse(data).detail}`);
    }
    this.dataset.state = "live"; // a set has arrived: what is shown is current
    this.#lastEventId = id;
    this.#messages = JSON.parse(data).data;
    this.#render();
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

if (!customElements.get("meridian-banner")) customElements.define("meridian-banner", MeridianBanner);
