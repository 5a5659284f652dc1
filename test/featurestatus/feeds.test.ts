// D63 Atom feeds through a real server on either backend, parsed by an XML
// parser (xmldom, which rejects a document that is not well-formed) and
// checked against RFC 4287's required elements.
import { describe, expect, it } from "vitest";
import { DOMParser, type Element } from "@xmldom/xmldom";
import { useMessageServer, draft, iso } from "../helpers/messages.js";
import { connectClient } from "../helpers/clients.js";
import { bearer, signToken } from "../helpers/server.js";
import { MessageDeliveryService } from "../../src/gen/meridian/featurestatus/v1/message_delivery_pb.js";

const ATOM = "http://www.w3.org/2005/Atom";

/** The document, or a throw on anything that is not well-formed XML. */
function parseXml(text: string) {
  return new DOMParser({
    onError: (level, msg) => {
      if (level !== "warning") throw new Error(`XML ${level}: ${msg}`);
    },
  }).parseFromString(text, "application/xml");
}

const children = (e: Element, name: string): Element[] =>
  Array.from(e.childNodes).filter(
    (n): n is Element => n.nodeType === 1 && (n as Element).localName === name && (n as Element).namespaceURI === ATOM,
  );
const one = (e: Element, name: string): Element => {
  const found = children(e, name);
  expect(found, `exactly one atom:${name} in atom:${e.localName}`).toHaveLength(1);
  return found[0];
};
const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

/** RFC 4287 4.1.1 and 4.1.2: what a feed and each entry must hold; returns the entries. */
function checkAtom(text: string): Element[] {
  const feed = parseXml(text).documentElement!;
  expect(feed.localName).toBe("feed");
  expect(feed.namespaceURI).toBe(ATOM);
  expect(one(feed, "id").textContent).toMatch(/^[a-z][a-z0-9+.-]*:/); // an IRI
  one(feed, "title");
  expect(one(feed, "updated").textContent).toMatch(RFC3339);
  const entries = children(feed, "entry");
  // atom:author is required of the feed unless every entry has one.
  if (!entries.every((e) => children(e, "author").length > 0)) expect(children(one(feed, "author"), "name")).toHaveLength(1);
  const ids = entries.map((e) => {
    one(e, "title");
    expect(one(e, "updated").textContent).toMatch(RFC3339);
    return one(e, "id").textContent;
  });
  expect(new Set(ids).size).toBe(ids.length);
  return entries;
}

describe("D63 Atom feeds", () => {
  const t = useMessageServer();
  /** The feed of `path` ("" for the global one, "/orders" for a feature's) with these headers and query parameters. */
  const feed = (path: string, headers: Record<string, string>, query: Record<string, string> = {}) =>
    fetch(
      `${t.server.url}/api/admin/feature${path}/message/feed.atom${Object.keys(query).length ? `?${new URLSearchParams(query)}` : ""}`,
      {
        headers,
      },
    );

  it("D63 a feature's feed: its active messages and the global ones as Atom 1.0, content the sanitised HTML", async () => {
    const mine = (
      await t.a.create("feeds", draft({ type: "Critical", title: `Orders <down> & "out"`, body: "<b>now</b><script>alert(1)</script>" }))
    ).json;
    const global = (await t.a.create(null, draft({ title: "Everyone" }))).json;
    await t.a.create("feeds", draft({ title: "Not yet", startDate: iso(3600), expiringDate: iso(7200) }));
    await t.a.create("other", draft({ title: "Another feature's" }));
    const r = await feed("/feeds", { "svc-open-api-key": t.key });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/atom+xml; charset=utf-8");
    const entries = checkAtom(await r.text());
    const byId = new Map(entries.map((e) => [one(e, "id").textContent, e]));
    expect([...byId.keys()].sort()).toEqual([`urn:meridian:message:${mine.id}`, `urn:meridian:message:${global.id}`].sort());
    const e = byId.get(`urn:meridian:message:${mine.id}`)!;
    expect(one(e, "title").textContent).toBe(mine.title); // as stored (titles are plain text, D20), & and " escaped and read back
    expect(mine.title).toContain('& "out"');
    const content = one(e, "content");
    expect(content.getAttribute("type")).toBe("html");
    expect(content.textContent).toBe(mine.body); // the stored, sanitised body: no script
    expect(content.textContent).not.toContain("script");
    expect(one(e, "category").getAttribute("term")).toBe("Critical");
  });

  it("D63 an update moves the entry's updated, and the feed's", async () => {
    const m = (await t.a.create("moving", draft())).json;
    const first = checkAtom(await (await feed("/moving", { "svc-open-api-key": t.key })).text());
    const before = Date.parse(
      one(
        first.find((e) => one(e, "id").textContent === `urn:meridian:message:${m.id}`)!,
        "updated",
      ).textContent!,
    );
    await new Promise((r) => setTimeout(r, 1100));
    await t.a.update("moving", m.id, { title: "moved" });
    const text = await (await feed("/moving", { "svc-open-api-key": t.key })).text();
    const after = checkAtom(text).find((e) => one(e, "id").textContent === `urn:meridian:message:${m.id}`)!;
    expect(Date.parse(one(after, "updated").textContent!)).toBeGreaterThan(before);
    expect(Date.parse(one(parseXml(text).documentElement!, "updated").textContent!)).toBeGreaterThanOrEqual(
      Date.parse(one(after, "updated").textContent!),
    );
  });

  it("D63 the global feed: global messages only; text XML cannot hold is dropped, the document stays well-formed", async () => {
    const m = (await t.a.create(null, draft({ title: "Bell \u0007 and ]]> end" }))).json;
    const r = await feed("", { "svc-open-api-key": t.key });
    const entries = checkAtom(await r.text());
    expect(entries.every((e) => one(e, "id").textContent !== null)).toBe(true);
    const e = entries.find((x) => one(x, "id").textContent === `urn:meridian:message:${m.id}`)!;
    expect(one(e, "title").textContent).toBe(m.title.replace("\u0007", ""));
  });

  it("D63 a read key of the feature reads its feed; another feature's is 403; ?key= is not a credential (401)", async () => {
    const reader = await t.server.key({ clientId: "feeds", scopes: ["platform_iam_featurestatus_read"] });
    expect((await feed("/feeds", { "svc-open-api-key": reader })).status).toBe(200);
    expect((await feed("", { "svc-open-api-key": reader })).status).toBe(200);
    expect((await feed("/other", { "svc-open-api-key": reader })).status).toBe(403);
    const byQuery = await fetch(`${t.server.url}/api/admin/feature/feeds/message/feed.atom?key=${encodeURIComponent(reader)}`);
    expect(byQuery.status).toBe(401);
    expect(byQuery.headers.get("content-type")).toContain("application/problem+json");
  });

  it("D63 the feed over Connect: one HttpBody with the Atom document", async () => {
    const client = connectClient(MessageDeliveryService, t.server.url);
    const chunks = [];
    for await (const c of client.getGlobalMessageFeed({}, { headers: { "svc-open-api-key": t.key } })) chunks.push(c);
    expect(chunks).toHaveLength(1);
    expect(chunks[0].contentType).toBe("application/atom+xml; charset=utf-8");
    checkAtom(Buffer.from(chunks[0].data).toString());
  });

  it("D63 a public key (D60) reads the feeds of its features and the global one, and no other feature's", async () => {
    const page = (
      await t.server.app.backend.apiKeys.create({
        clientId: "shop",
        roles: [],
        scopes: [],
        projects: [],
        publicKey: { features: ["feeds"], origins: [] },
      })
    ).key;
    const mine = await feed("/feeds", { "svc-open-api-key": page });
    expect(mine.status).toBe(200);
    checkAtom(await mine.text());
    expect((await feed("", { "svc-open-api-key": page })).status).toBe(200);
    const other = await feed("/other", { "svc-open-api-key": page });
    expect(other.status).toBe(403);
    expect((await other.json()).reason).toBe("PUBLIC_KEY_NOT_ALLOWED");
  });

  /** The titles of a feed's entries but the global ones other tests made, sorted, and each entry's xml:lang by title. */
  const OWN = /^(Feed |Maintenance tonight|Wartung heute Nacht|Only in English)/;
  const read = async (r: Response) => {
    expect(r.status).toBe(200);
    const entries = checkAtom(await r.text()).filter((e) => OWN.test(one(e, "title").textContent!));
    const titles = entries.map((e) => one(e, "title").textContent!).sort();
    const langs = Object.fromEntries(entries.map((e) => [one(e, "title").textContent!, e.getAttribute("xml:lang") || null]));
    return { titles, langs, headers: r.headers };
  };

  it("D61 D63 a feed holds what its reader's audiences see, as the listing does: a public key's --audience, a token's groups", async () => {
    for (const d of [
      { title: "Feed for all" },
      { title: "Feed for staff", audiences: ["staff"] },
      { title: "Feed for customers", audiences: ["customers"] },
      { title: "Feed on orders pages", paths: ["/orders/**"] },
    ])
      expect((await t.a.create("aimed", draft(d))).status).toBe(201);
    const staffKey = (
      await t.server.app.backend.apiKeys.create({
        clientId: "shop",
        roles: [],
        scopes: [],
        projects: [],
        audiences: ["staff"],
        publicKey: { features: ["aimed"], origins: [] },
      })
    ).key;
    const customers = bearer(
      await signToken({ sub: "c1", client_id: "aimed", scope: "platform_iam_featurestatus_read", groups: ["customers"] }),
    );
    expect((await read(await feed("/aimed", { "svc-open-api-key": staffKey }))).titles).toEqual([
      "Feed for all",
      "Feed for staff",
      "Feed on orders pages",
    ]);
    expect((await read(await feed("/aimed", customers))).titles).toEqual(["Feed for all", "Feed for customers", "Feed on orders pages"]);
    // The page a banner is on (path), as the listing reads it.
    const onHelp = await feed("/aimed", customers, { path: "/help" });
    expect((await read(onHelp)).titles).toEqual(["Feed for all", "Feed for customers"]);
    // BackOffice reads every message, or what the audiences it names see.
    expect((await read(await feed("/aimed", { "svc-open-api-key": t.key }))).titles).toEqual([
      "Feed for all",
      "Feed for customers",
      "Feed for staff",
      "Feed on orders pages",
    ]);
    const asStaff = await feed("/aimed", { "svc-open-api-key": t.key }, { audience: "staff" });
    expect((await read(asStaff)).titles).toEqual(["Feed for all", "Feed for staff", "Feed on orders pages"]);
    // Naming audiences is BackOffice's, as on the listing.
    const named = await feed("/aimed", customers, { audience: "staff" });
    expect(named.status).toBe(403);
  });

  it("D62 D63 a feed is in the reader's language: Accept-Language: de gives the German translation, with xml:lang and Content-Language", async () => {
    const m = (
      await t.a.create(
        "spoken",
        draft({
          title: "Maintenance tonight",
          body: "<p>Orders pause</p>",
          translations: { de: { title: "Wartung heute Nacht", body: "<p>Bestellungen ruhen</p>" } },
        }),
      )
    ).json;
    await t.a.create("spoken", draft({ title: "Only in English" }));
    const de = await feed("/spoken", { "svc-open-api-key": t.key, "accept-language": "de-CH, en;q=0.5" });
    const text = await de.clone().text();
    const got = await read(de);
    expect(got.titles).toEqual(["Only in English", "Wartung heute Nacht"]);
    expect(got.langs).toEqual({ "Wartung heute Nacht": "de", "Only in English": null });
    expect(got.headers.get("content-language")).toBe("de");
    expect(got.headers.get("vary")?.toLowerCase()).toContain("accept-language");
    const entry = checkAtom(text).find((e) => one(e, "id").textContent === `urn:meridian:message:${m.id}`)!;
    expect(one(entry, "content").textContent).toBe("<p>Bestellungen ruhen</p>");
    // Without a wish, the default text; a lang parameter overrides the header.
    const plain = await read(await feed("/spoken", { "svc-open-api-key": t.key }));
    expect(plain.titles).toEqual(["Maintenance tonight", "Only in English"]);
    expect(plain.headers.get("content-language")).toBeNull();
    const byParam = await feed("/spoken", { "svc-open-api-key": t.key, "accept-language": "fr" }, { lang: "de" });
    expect((await read(byParam)).titles).toEqual(["Only in English", "Wartung heute Nacht"]);
    const bad = await feed("/spoken", { "svc-open-api-key": t.key }, { lang: "not a tag" });
    expect(bad.status).toBe(400);
    expect(bad.headers.get("content-type")).toContain("application/problem+json");
  });
});
