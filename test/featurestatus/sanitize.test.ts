// D20 through the public interface: what is stored holds nothing outside the
// allowlist. Also runs every payload of the public lists vendored in
// test/fixtures/xss/ (sources and license in its README).
import { describe, expect, it } from "vitest";
import { parseFragment } from "parse5";
import { decodeHTML } from "entities";
import { startTestServer } from "../helpers/server.js";
import { api, draft, RW, useMessageServer, xssPayloads } from "../helpers/messages.js";
import { allowedAttributes } from "../../src/featurestatus/messages/sanitize.js";

/** The test's own reading of a stored body, as a browser would parse it. */
function bodyViolations(html: string, schemes = ["https:", "mailto:"]): string[] {
  const out: string[] = [];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- parse5 nodes of every kind, read by the fields each kind has
  const walk = (node: any) => {
    if (node.nodeName === "#comment") out.push("comment");
    if (node.tagName) {
      const attributes = allowedAttributes(node.tagName);
      if (attributes === undefined || node.namespaceURI !== "http://www.w3.org/1999/xhtml") out.push(`tag ${node.tagName}`);
      for (const at of node.attrs ?? []) {
        if (!attributes?.includes(at.name)) out.push(`attribute ${at.name}`);
        else if (at.name === "href") {
          let ok = false;
          try {
            ok = schemes.includes(new URL(at.value).protocol);
          } catch {
            // not a URL: ok stays false
          }
          if (!ok) out.push(`href ${at.value}`);
        }
      }
    }
    for (const c of node.childNodes ?? []) walk(c);
    if (node.content) walk(node.content);
  };
  walk(parseFragment(html));
  return out;
}

/** A stored title is plain text: no tag now, and none after any number of entity decodings. */
function titleViolations(title: string): string[] {
  let t = title;
  for (let i = 0; i < 5; i++) {
    if (/<[A-Za-z!/?]/.test(t)) return [`tag-like text in ${JSON.stringify(title)}`];
    const next = decodeHTML(t);
    if (next === t) break;
    t = next;
  }
  return [];
}

const t = useMessageServer();

/** Posts as body and as title; returns what was stored (or undefined when refused with a 400). */
async function store(payload: string): Promise<{ body?: string; title?: string }> {
  const asBody = await t.a.create("xss", draft({ body: payload }));
  const asTitle = await t.a.create("xss", draft({ title: payload }));
  for (const r of [asBody, asTitle]) expect([201, 400]).toContain(r.status);
  return { body: asBody.status === 201 ? asBody.json.body : undefined, title: asTitle.status === 201 ? asTitle.json.title : undefined };
}

const HARD_CASES = [
  '<a href="javascript:alert(1)">x</a>',
  '<a href="JaVaScRiPt:alert(1)">x</a>',
  '<a href="jav&#x09;ascript:alert(1)">x</a>',
  '<a href="jav\tascript:alert(1)">x</a>',
  '<a href="\u0001javascript:alert(1)">x</a>',
  '<a href=" javascript:alert(1)">x</a>',
  '<a href="&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;alert(1)">x</a>',
  '<a href="data:text/html,<script>alert(1)</script>">x</a>',
  '<a href="vbscript:msgbox(1)">x</a>',
  '<a href="//evil.example/x">protocol-relative</a>',
  '<a href="/relative">relative</a>',
  '<a href="relative/path">relative</a>',
  '<a href="https://ok.example" onclick="alert(1)" style="color:red" target="_blank">x</a>',
  "<b><i><u><script>alert(1)</script></u></i></b>",
  "<scr<script>ipt>alert(1)</script>",
  "<<script>script>alert(1)<</script>/script>",
  "&lt;script&gt;alert(1)&lt;/script&gt;",
  "&amp;lt;img src=x onerror=alert(1)&amp;gt;",
  "<img src=x onerror=alert(1)>",
  "<svg><script>alert(1)</script></svg>",
  '<svg><a href="https://ok.example">in svg</a></svg>',
  "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
  '<noscript><p title="</noscript><img src=x onerror=alert(1)>">',
  "<template><script>alert(1)</script></template>",
  "<textarea><script>alert(1)</script></textarea>",
  "<xmp><script>alert(1)</script></xmp>",
  "<style>body{background:url(javascript:alert(1))}</style>",
  "<!--<img src=x onerror=alert(1)>-->",
  "<![CDATA[<script>alert(1)</script>]]>",
  "<p/onmouseover=alert(1)>x</p>",
  "<IMG SRC=JaVaScRiPt:alert('XSS')>",
  "<iframe src=javascript:alert(1)></iframe>",
  "<form><button formaction=javascript:alert(1)>x</button></form>",
  '<a href="https://ok.example">unclosed',
  "<p>unclosed <b>nested <i>deep",
  "\u0000<script>alert(1)</script>",
  "<scr\u0000ipt>alert(1)</scr\u0000ipt>",
];

describe("D20 sanitising", () => {
  it("D20 the allowlist survives: b strong i em u br p ul ol li and a with https/mailto href", async () => {
    const html =
      '<p><b>b</b><strong>s</strong><i>i</i><em>e</em><u>u</u><br /></p><ul><li>1</li></ul><ol><li>2</li></ol><p><a href="https://x.example/a?b=1&amp;c=2">l</a><a href="mailto:ops@x.example">m</a></p>';
    const r = await t.a.create("keep", draft({ body: html }));
    expect(r.json.body).toBe(html);
  });

  it("D20 http: links are removed unless MERIDIAN_ALLOW_HTTP_LINKS=true", async () => {
    const r = await t.a.create("http", draft({ body: '<a href="http://x.example">x</a>' }));
    expect(r.json.body).toBe("<a>x</a>");
    const s2 = await startTestServer({ MERIDIAN_ALLOW_HTTP_LINKS: "true" });
    try {
      const r2 = await api(s2, await s2.key(RW)).create("http", draft({ body: '<a href="http://x.example">x</a>' }));
      expect(r2.json.body).toBe('<a href="http://x.example">x</a>');
    } finally {
      await s2.close();
    }
  });

  it("D20 the content of script, style, textarea, xmp, noscript, template, svg and math is dropped, not kept as text", async () => {
    for (const tag of ["script", "style", "textarea", "xmp", "noscript", "template", "svg", "math"]) {
      const r = await t.a.create("drop", draft({ body: `<p>keep</p><${tag}>SECRET</${tag}>` }));
      expect(r.json.body, tag).toBe("<p>keep</p>");
    }
  });

  it("D20 the title is plain text; < and & that form no tag stay characters", async () => {
    expect((await t.a.create("t", draft({ title: "<b>Planned</b> maintenance" }))).json.title).toBe("Planned maintenance");
    expect((await t.a.create("t", draft({ title: "a < b & c > d" }))).json.title).toBe("a < b & c > d");
    expect((await t.a.create("t", draft({ title: "I <3 uptime" }))).json.title).toBe("I <3 uptime");
  });

  it("D20 a title that is empty once markup is removed gets 400", async () => {
    for (const title of ["<script>alert(1)</script>", "<b></b>", "   ", "&lt;script&gt;x&lt;/script&gt;"]) {
      const r = await t.a.create("t", draft({ title }));
      expect(r.status, title).toBe(400);
      expect(Object.keys(r.json.errors)).toEqual(["title"]);
    }
  });

  it("D20 sanitising applies on update too", async () => {
    const m = (await t.a.create("u", draft())).json;
    const r = await t.a.update("u", m.id, { body: "<img src=x onerror=alert(1)><b>ok</b>", title: "<i>t</i>" });
    expect(r.json.body).toBe("<b>ok</b>");
    expect(r.json.title).toBe("t");
  });

  it.each(HARD_CASES)("D20 hard case %j stores nothing outside the allowlist", async (payload) => {
    const stored = await store(payload);
    if (stored.body !== undefined) expect(bodyViolations(stored.body)).toEqual([]);
    if (stored.title !== undefined) expect(titleViolations(stored.title)).toEqual([]);
  });

  it("D20 every payload of test/fixtures/xss/*.txt, as body and as title, stores nothing outside the allowlist", async () => {
    const payloads = xssPayloads();
    for (const { file, payload } of payloads) {
      const stored = await store(payload);
      if (stored.body !== undefined) expect(bodyViolations(stored.body), `${file}: ${payload}`).toEqual([]);
      if (stored.title !== undefined) expect(titleViolations(stored.title), `${file}: ${payload}`).toEqual([]);
    }
    expect(payloads.length).toBeGreaterThan(150);
  });
});
