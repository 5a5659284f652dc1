// D61 targeting and D62 languages through a real server (either backend, as
// MERIDIAN_TEST_BACKEND says) over REST, Connect and gRPC (grpc-js): who sees
// a targeted message, on which page, in which language; the listing cache and
// the live streams per audience; bad input refused whole. The rules alone:
// targeting-rules.test.ts.
import * as grpc from "@grpc/grpc-js";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ActiveMessagesSchema,
  FeatureStatusService,
  WatchMessagesRequestSchema,
  type ActiveMessages,
} from "../../src/gen/meridian/featurestatus/v1/feature_status_pb.js";
import { connectClient, grpcUnary, hostPort } from "../helpers/clients.js";
import { RW, api, draft, type ApiMessage } from "../helpers/messages.js";
import { bearer, signToken, startTestServer, type TestServer } from "../helpers/server.js";
import { nextEvent, openSse } from "../helpers/sse.js";

const READ = "platform_iam_featurestatus_read";

let server: TestServer;
let w: ReturnType<typeof api>;
beforeAll(async () => {
  server = await startTestServer({ MERIDIAN_SSE_HEARTBEAT_S: "1" });
  w = api(server, await server.key(RW));
});
afterAll(() => server.close());

/** A reader's token for `feature` (D13: a client lists its own feature) with these groups and roles. */
const reader = (feature: string, claims: { groups?: string[]; roles?: string[] } = {}) =>
  signToken({ sub: `reader-of-${feature}`, client_id: feature, scope: READ, ...claims });

async function restList(feature: string, auth: Record<string, string>, query = "", headers: Record<string, string> = {}) {
  const r = await fetch(`${server.url}/api/admin/feature/${feature}/message${query ? `?${query}` : ""}`, {
    headers: { ...auth, ...headers },
  });
  const text = await r.text();
  return { status: r.status, headers: r.headers, json: text ? JSON.parse(text) : undefined };
}
const titles = (data: { title: string }[]) => data.map((m) => m.title).sort();

/** Creates the messages of one feature; returns them by title. */
async function seed(feature: string, drafts: Record<string, unknown>[]): Promise<ApiMessage[]> {
  const out: ApiMessage[] = [];
  for (const d of drafts) {
    const r = await w.create(feature, draft(d));
    expect(r.status, JSON.stringify(r.json)).toBe(201);
    out.push(r.json);
  }
  return out;
}

const TARGETED = [
  { title: "For everyone" },
  { title: "Staff only", audiences: ["staff"] },
  { title: "Customers only", audiences: ["customers"] },
  { title: "Staff or beta", audiences: ["staff", "beta"] },
  { title: "Orders pages", paths: ["/orders/**"] },
  { title: "Staff on checkout", audiences: ["staff"], paths: ["/checkout", "/cart/*"] },
];

describe("D61 targeting", () => {
  beforeAll(async () => {
    await seed("tg", TARGETED);
  });

  it("D61 a listing holds the messages for everyone and those of the caller's audiences (a token's groups and roles), over REST", async () => {
    const staff = bearer(await reader("tg", { groups: ["staff"] }));
    expect(titles((await restList("tg", staff)).json.data)).toEqual([
      "For everyone",
      "Orders pages",
      "Staff on checkout",
      "Staff only",
      "Staff or beta",
    ]);
    const customers = bearer(await reader("tg", { groups: ["customers"] }));
    expect(titles((await restList("tg", customers)).json.data)).toEqual(["Customers only", "For everyone", "Orders pages"]);
    const beta = bearer(await reader("tg", { roles: ["beta"] }));
    expect(titles((await restList("tg", beta)).json.data)).toEqual(["For everyone", "Orders pages", "Staff or beta"]);
    const nobody = bearer(await reader("tg"));
    expect(titles((await restList("tg", nobody)).json.data)).toEqual(["For everyone", "Orders pages"]);
  });

  it("D60 D61 a public key's audiences (--audience) choose its targeted messages, over REST and SSE", async () => {
    const staffPage = await server.key({ clientId: "shop", publicKey: { features: ["tg"], origins: [] }, audiences: ["staff"] });
    const anyone = await server.key({ clientId: "shop", publicKey: { features: ["tg"], origins: [] } });
    const listed = await restList("tg", { "svc-open-api-key": staffPage }, "path=/orders/1");
    expect(titles(listed.json.data)).toEqual(["For everyone", "Orders pages", "Staff only", "Staff or beta"]);
    expect(titles((await restList("tg", { "svc-open-api-key": anyone })).json.data)).toEqual(["For everyone", "Orders pages"]);
    const sse = await openSse(`${server.url}/api/admin/feature/tg/message/stream?path=/help`, { "svc-open-api-key": staffPage });
    try {
      expect(titles((await nextEvent(sse)).messages)).toEqual(["For everyone", "Staff only", "Staff or beta"]);
    } finally {
      sse.close();
    }
  });

  it("D61 a listing that names a path holds the messages for every page and those whose globs match it", async () => {
    const staff = bearer(await reader("tg", { groups: ["staff"] }));
    expect(titles((await restList("tg", staff, "path=/orders/7")).json.data)).toEqual([
      "For everyone",
      "Orders pages",
      "Staff only",
      "Staff or beta",
    ]);
    expect(titles((await restList("tg", staff, "path=/cart/1")).json.data)).toEqual([
      "For everyone",
      "Staff on checkout",
      "Staff only",
      "Staff or beta",
    ]);
    expect(titles((await restList("tg", staff, `path=${encodeURIComponent("/help")}`)).json.data)).toEqual([
      "For everyone",
      "Staff only",
      "Staff or beta",
    ]);
  });

  it("D61 the same over Connect and gRPC: audiences from the token, path from the request", async () => {
    const token = await reader("tg", { groups: ["customers"] });
    const client = connectClient(FeatureStatusService, server.url);
    const viaConnect = await client.listFeatureMessages({ featureId: "tg", path: "/orders" }, { headers: bearer(token) });
    expect(titles(viaConnect.data)).toEqual(["Customers only", "For everyone", "Orders pages"]);
    const viaGrpc = await grpcUnary(
      hostPort(server.url),
      FeatureStatusService.method.listFeatureMessages,
      { featureId: "tg", path: "/help" },
      bearer(token),
    );
    expect(viaGrpc.error).toBeUndefined();
    expect(titles(viaGrpc.response!.data)).toEqual(["Customers only", "For everyone"]);
    // A reader sees no targeting: the audiences and paths of what it may see are BackOffice's business.
    expect(viaGrpc.response!.data.every((m) => m.audiences.length === 0 && m.paths.length === 0)).toBe(true);
  });

  it("D61 BackOffice lists every message with its targeting, and filters by audience", async () => {
    const all = (await w.list("tg", "limit=100")).json.data as (ApiMessage & { audiences: string[]; paths: string[] })[];
    expect(titles(all)).toEqual(TARGETED.map((t) => t.title).sort());
    expect(all.find((m) => m.title === "Staff on checkout")).toMatchObject({ audiences: ["staff"], paths: ["/checkout", "/cart/*"] });
    // What the customers see: the messages for everyone and those naming them.
    expect(titles((await w.list("tg", "audience=customers")).json.data)).toEqual(["Customers only", "For everyone", "Orders pages"]);
    expect(titles((await w.list("tg", "audience=customers&audience=beta&path=/x")).json.data)).toEqual([
      "Customers only",
      "For everyone",
      "Staff or beta",
    ]);
    // Outside BackOffice, naming audiences would read other people's messages.
    const r = await restList("tg", bearer(await reader("tg", { groups: ["customers"] })), "audience=staff");
    expect(r.status).toBe(403);
  });

  it("D61 outside BackOffice a read by id reaches only a message the caller's listing holds, and shows no targeting", async () => {
    const byId = async (id: number, auth: Record<string, string>) => {
      const r = await fetch(`${server.url}/api/admin/feature/tg/message/${id}`, { headers: auth });
      return { status: r.status, json: (await r.json()) as ApiMessage & { audiences: string[]; paths: string[]; code?: string } };
    };
    const all = (await w.list("tg", "limit=100")).json.data as ApiMessage[];
    const staffOnly = all.find((m) => m.title === "Staff on checkout")!;
    const customers = bearer(await reader("tg", { groups: ["customers"] }));
    const notFor = await byId(staffOnly.id, customers);
    expect([notFor.status, notFor.json.code]).toEqual([404, "not_found"]);
    const staff = await byId(staffOnly.id, bearer(await reader("tg", { groups: ["staff"] })));
    expect(staff.status).toBe(200);
    expect(staff.json).toMatchObject({ id: staffOnly.id, title: "Staff on checkout", audiences: [], paths: [] });
    // A read key made with the audience reads it too; one without does not (D60 keys are refused by id, D13).
    const keyed = await server.key({ clientId: "tg", scopes: [READ], audiences: ["staff"] });
    expect((await byId(staffOnly.id, { "svc-open-api-key": keyed })).status).toBe(200);
    const plain = await server.key({ clientId: "tg", scopes: [READ] });
    expect((await byId(staffOnly.id, { "svc-open-api-key": plain })).status).toBe(404);
    // BackOffice reads the stored message, targeting and all.
    const editor = await byId(staffOnly.id, { "svc-open-api-key": await server.key(RW) });
    expect(editor.json).toMatchObject({ audiences: ["staff"], paths: ["/checkout", "/cart/*"] });
  });

  it("D61 pages skip what the caller does not see and the cursor goes on from the last one shown", async () => {
    const feature = "tg-pages";
    await seed(
      feature,
      Array.from({ length: 9 }, (_, i) => ({
        title: `m${i}`,
        audiences: i % 3 === 0 ? [] : ["hidden"],
        startDate: new Date(Date.now() - (i + 1) * 60_000).toISOString(),
      })),
    );
    const auth = bearer(await reader(feature));
    const first = await restList(feature, auth, "limit=2");
    expect(first.json.data.map((m: ApiMessage) => m.title)).toEqual(["m0", "m3"]);
    expect(first.json.cursor).toEqual(expect.any(String));
    const second = await restList(feature, auth, `limit=2&cursor=${encodeURIComponent(first.json.cursor)}`);
    expect(second.json.data.map((m: ApiMessage) => m.title)).toEqual(["m6"]);
    expect(second.json.cursor).toBeNull();
  });

  it("D61 the listing cache answers each audience its own page; a write for one audience leaves the other's page as it was", async () => {
    const feature = "tg-cache";
    await seed(feature, [{ title: "Everyone" }]);
    const staff = bearer(await reader(feature, { groups: ["staff"] }));
    const customers = bearer(await reader(feature, { groups: ["customers"] }));
    const s1 = await restList(feature, staff);
    const c1 = await restList(feature, customers);
    expect(titles(s1.json.data)).toEqual(["Everyone"]);
    await seed(feature, [{ title: "Staff news", audiences: ["staff"] }]);
    const s2 = await restList(feature, staff);
    expect(titles(s2.json.data)).toEqual(["Everyone", "Staff news"]);
    const c2 = await restList(feature, customers);
    expect(titles(c2.json.data)).toEqual(["Everyone"]);
    expect(c2.headers.get("etag")).toBe(c1.headers.get("etag"));
    expect((await restList(feature, customers, "", { "if-none-match": c1.headers.get("etag")! })).status).toBe(304);
    expect(s2.headers.get("etag")).not.toBe(s1.headers.get("etag"));
    // Again, from the cache: still each its own.
    expect(titles((await restList(feature, customers)).json.data)).toEqual(["Everyone"]);
    expect(titles((await restList(feature, staff)).json.data)).toEqual(["Everyone", "Staff news"]);
  });

  it("D61 two audiences watching one feature each see only their own, over SSE", async () => {
    const feature = "tg-sse";
    await seed(feature, [{ title: "Everyone" }]);
    const url = `${server.url}/api/admin/feature/${feature}/message/stream`;
    const staff = await openSse(url, bearer(await reader(feature, { groups: ["staff"] })));
    const customers = await openSse(url, bearer(await reader(feature, { groups: ["customers"] })));
    try {
      expect((await nextEvent(staff)).messages.map((m) => m.title)).toEqual(["Everyone"]);
      expect((await nextEvent(customers)).messages.map((m) => m.title)).toEqual(["Everyone"]);
      await seed(feature, [{ title: "For staff", audiences: ["staff"] }]);
      expect(titles((await nextEvent(staff)).messages)).toEqual(["Everyone", "For staff"]);
      await seed(feature, [{ title: "For customers", audiences: ["customers"] }]);
      // The customers' next set is the one with their message: the staff's write sent them nothing.
      expect(titles((await nextEvent(customers)).messages)).toEqual(["Everyone", "For customers"]);
      expect(titles((await nextEvent(staff, 1500).catch(() => ({ messages: [] }))).messages)).toEqual([]);
    } finally {
      staff.close();
      customers.close();
    }
  });

  it("D61 two audiences watching one feature each see only their own, over gRPC (WatchMessages)", async () => {
    const feature = "tg-grpc";
    await seed(feature, [{ title: "Everyone" }]);
    const staff = grpcWatch(feature, bearer(await reader(feature, { groups: ["staff"] })));
    const customers = grpcWatch(feature, bearer(await reader(feature, { groups: ["customers"] })));
    try {
      expect(titles((await staff.next()).data)).toEqual(["Everyone"]);
      expect(titles((await customers.next()).data)).toEqual(["Everyone"]);
      await seed(feature, [{ title: "For staff", audiences: ["staff"] }]);
      expect(titles((await staff.next()).data)).toEqual(["Everyone", "For staff"]);
      await seed(feature, [{ title: "For customers", audiences: ["customers"] }]);
      expect(titles((await customers.next()).data)).toEqual(["Everyone", "For customers"]);
      expect(staff.pending()).toBe(0);
    } finally {
      staff.close();
      customers.close();
    }
  });

  it("D61 a stream that names a path gets only that page's messages", async () => {
    const feature = "tg-path-stream";
    await seed(feature, [{ title: "Everywhere" }, { title: "Help only", paths: ["/help/**"] }]);
    const client = connectClient(FeatureStatusService, server.url);
    const abort = new AbortController();
    const it = client
      .watchMessages({ featureId: feature, path: "/orders" }, { headers: bearer(await reader(feature)), signal: abort.signal })
      [Symbol.asyncIterator]();
    try {
      expect(titles((await it.next()).value.data)).toEqual(["Everywhere"]);
    } finally {
      abort.abort();
    }
  });
});

const TRANSLATED = {
  title: "Maintenance",
  body: "<b>tonight</b>",
  translations: {
    de: { title: "Wartung", body: "<b>heute Abend</b>" },
    fr: { title: "Maintenance ce soir", body: "" },
    "pt-br": { title: "Manutenção" },
  },
};

describe("D62 languages", () => {
  beforeAll(async () => {
    await seed("lg", [TRANSLATED, { title: "Only English" }]);
  });

  it("D62 Accept-Language chooses each message's translation by q-value and the answer names it (language, Content-Language)", async () => {
    const auth = bearer(await reader("lg"));
    const byTitle = (data: { title: string; language: string | null }[]) => Object.fromEntries(data.map((m) => [m.title, m.language]));
    const de = await restList("lg", auth, "", { "accept-language": "fr;q=0.5, de;q=0.9, en;q=0.1" });
    expect(byTitle(de.json.data)).toEqual({ Wartung: "de", "Only English": null });
    expect(de.headers.get("content-language")).toBe("de");
    // A cache between must keep one answer per language (RFC 9110, 12.5.5).
    expect(de.headers.get("vary")?.toLowerCase()).toContain("accept-language");
    expect(
      (await restList("lg", auth, "", { "accept-language": "de", "if-none-match": de.headers.get("etag")! })).headers.get("vary"),
    ).toContain("accept-language");
    expect(de.json.data.find((m: ApiMessage) => m.title === "Wartung").body).toBe("<b>heute Abend</b>");
    // de-CH falls back to de; an unknown language to the default text (and no Content-Language).
    expect(byTitle((await restList("lg", auth, "", { "accept-language": "de-CH" })).json.data)).toEqual({
      Wartung: "de",
      "Only English": null,
    });
    const it = await restList("lg", auth, "", { "accept-language": "it" });
    expect(byTitle(it.json.data)).toEqual({ Maintenance: null, "Only English": null });
    expect(it.headers.get("content-language")).toBeNull();
    // Tags are stored canonical: pt-br is pt-BR.
    expect(byTitle((await restList("lg", auth, "", { "accept-language": "pt-BR" })).json.data)).toMatchObject({ Manutenção: "pt-BR" });
  });

  it("D62 a lang parameter overrides Accept-Language, with the same fallbacks", async () => {
    const auth = bearer(await reader("lg"));
    const r = await restList("lg", auth, "lang=fr-CA", { "accept-language": "de" });
    expect(titles(r.json.data)).toEqual(["Maintenance ce soir", "Only English"]);
    expect(r.headers.get("content-language")).toBe("fr");
    expect((await restList("lg", auth, "lang=de_DE")).status).toBe(400);
  });

  it("D62 the same over Connect and gRPC: Accept-Language as a header or metadata, lang as a field", async () => {
    const token = await reader("lg");
    const client = connectClient(FeatureStatusService, server.url);
    const viaConnect = await client.listFeatureMessages({ featureId: "lg" }, { headers: { ...bearer(token), "accept-language": "de-AT" } });
    expect(viaConnect.data.map((m) => [m.title, m.language])).toContainEqual(["Wartung", "de"]);
    const viaGrpc = await grpcUnary(
      hostPort(server.url),
      FeatureStatusService.method.listFeatureMessages,
      { featureId: "lg", lang: "fr" },
      {
        ...bearer(token),
        "accept-language": "de",
      },
    );
    expect(viaGrpc.response!.data.map((m) => [m.title, m.language])).toContainEqual(["Maintenance ce soir", "fr"]);
  });

  it("D62 streams answer in the reader's language: SSE by Accept-Language, WatchMessages by lang", async () => {
    const token = await reader("lg");
    const sse = await openSse(`${server.url}/api/admin/feature/lg/message/stream`, { ...bearer(token), "accept-language": "de" });
    try {
      expect(titles((await nextEvent(sse)).messages)).toEqual(["Only English", "Wartung"]);
    } finally {
      sse.close();
    }
    const rpc = grpcWatch("lg", bearer(token), { lang: "fr" });
    try {
      const set = await rpc.next();
      expect(set.data.map((m) => [m.title, m.language ?? null])).toContainEqual(["Maintenance ce soir", "fr"]);
    } finally {
      rpc.close();
    }
  });

  it("D62 BackOffice reads return every translation; a read by id gives the stored default text", async () => {
    const listed = (await w.call("GET", "/api/admin/feature/lg/message")).json.data.find(
      (m: { translations: object }) => Object.keys(m.translations).length > 0,
    );
    expect(listed.translations).toEqual({
      de: { title: "Wartung", body: "<b>heute Abend</b>" },
      fr: { title: "Maintenance ce soir", body: "" },
      "pt-BR": { title: "Manutenção", body: "" },
    });
    const read = await fetch(`${server.url}/api/admin/feature/lg/message/${listed.id}`, {
      headers: { "svc-open-api-key": await server.key(RW), "accept-language": "de" },
    });
    const body = await read.json();
    expect(body).toMatchObject({ title: "Maintenance", language: null, translations: listed.translations });
  });

  it("D62 outside BackOffice a read by id is in the reader's language, says so, and carries no translations", async () => {
    const listed = (await w.call("GET", "/api/admin/feature/lg/message")).json.data.find(
      (m: { translations: object }) => Object.keys(m.translations).length > 0,
    );
    const read = await fetch(`${server.url}/api/admin/feature/lg/message/${listed.id}`, {
      headers: { ...bearer(await reader("lg")), "accept-language": "de" },
    });
    expect(read.status).toBe(200);
    expect(read.headers.get("content-language")).toBe("de");
    expect(read.headers.get("vary")).toContain("accept-language");
    expect(await read.json()).toMatchObject({ title: "Wartung", language: "de", translations: {} });
  });

  it("D62 translations are sanitised and length-checked like the default", async () => {
    const r = await w.create(
      "lg-clean",
      draft({ translations: { de: { title: "<i>Wartung</i>", body: '<p onclick="x()">bald<script>alert(1)</script></p>' } } }),
    );
    expect(r.status).toBe(201);
    expect(r.json.translations.de).toEqual({ title: "Wartung", body: "<p>bald</p>" });
    const tooLong = await w.create("lg-clean", draft({ translations: { de: { title: "x".repeat(256) } } }));
    expect(tooLong.status).toBe(400);
    expect(Object.keys(tooLong.json.errors)).toEqual(["translations.de.title"]);
    const empty = await w.create("lg-clean", draft({ translations: { de: { title: "<b></b>" } } }));
    expect(Object.keys(empty.json.errors)).toEqual(["translations.de.title"]);
  });
});

describe("D61 D62 bad input and edits", () => {
  const many = (n: number) => Array.from({ length: n }, (_, i) => `a${i}`);
  const BAD: [string, Record<string, unknown>, string][] = [
    ["a malformed glob", { paths: ["/ok/**", "/orders/[0-9"] }, "paths[1]"],
    ["a glob that is not a string", { paths: [7] }, "paths[0]"],
    ["paths that are not an array", { paths: "/orders" }, "paths"],
    ["51 audiences", { audiences: many(51) }, "audiences"],
    ["an empty audience", { audiences: [""] }, "audiences[0]"],
    ["a tag that is not BCP 47", { translations: { de_CH: { title: "Wartung" } } }, "translations.de_CH"],
    ["51 translations", { translations: Object.fromEntries(many(51).map((_, i) => [`de-x-n${i}`, { title: "t" }])) }, "translations"],
    ["an unknown field in a translation", { translations: { de: { title: "Wartung", colour: "red" } } }, "translations.de.colour"],
    ["a translation without a title", { translations: { de: { body: "x" } } }, "translations.de.title"],
    ["a translation that is not an object", { translations: { de: "Wartung" } }, "translations.de"],
    ["one language twice", { translations: { de: { title: "a" }, DE: { title: "b" } } }, "translations.DE"],
  ];

  it.each(BAD)("D61 D62 %s is a 400 naming the field, and nothing is stored", async (_, fields, field) => {
    const before = (await w.list("bad", "expiry=All&limit=1000")).json.data.length;
    const r = await w.create("bad", draft(fields));
    expect(r.status).toBe(400);
    expect(r.headers.get("content-type")).toContain("application/problem+json");
    expect(Object.keys(r.json.errors)).toEqual([field]);
    expect((await w.list("bad", "expiry=All&limit=1000")).json.data.length).toBe(before);
  });

  it("D61 D62 over Connect too: INVALID_ARGUMENT naming the field, nothing stored", async () => {
    const client = connectClient(FeatureStatusService, server.url);
    const headers = { "svc-open-api-key": await server.key(RW) };
    const e = await client
      .createFeatureMessage(
        { featureId: "bad-rpc", message: { ...draft(), audiences: { values: [{ kind: { case: "numberValue", value: 1 } }] } } as never },
        { headers },
      )
      .catch((x: unknown) => ConnectError.from(x));
    expect(e).toBeInstanceOf(ConnectError);
    expect((e as ConnectError).code).toBe(Code.InvalidArgument);
    expect((e as ConnectError).rawMessage).toContain("audiences[0]");
    expect((await client.listFeatureMessages({ featureId: "bad-rpc", expiry: "All" }, { headers })).data).toEqual([]);
  });

  it("D61 listing parameters: a path too long, an audience that is empty are 400 naming them", async () => {
    expect(Object.keys((await w.list("bad", `path=/${"x".repeat(2048)}`)).json.errors)).toEqual(["path"]);
    expect(Object.keys((await w.list("bad", "audience=")).json.errors)).toEqual(["audience"]);
  });

  it("D61 D62 an update: absent fields keep targeting and translations, [] and {} clear them; the ETag moves; the audit records both sides", async () => {
    const m = (await w.create("edit", draft({ audiences: ["staff"], paths: ["/a"], translations: { de: { title: "Wartung" } } }))).json;
    const kept = await w.update("edit", m.id, { title: "Renamed" });
    expect(kept.json).toMatchObject({
      title: "Renamed",
      audiences: ["staff"],
      paths: ["/a"],
      translations: { de: { title: "Wartung", body: "" } },
    });
    expect(kept.headers.get("etag")).toBe(`"${m.id}.2"`);
    const replaced = await w.update("edit", m.id, { audiences: ["beta"], translations: { fr: { title: "Maintenance" } } });
    expect(replaced.json).toMatchObject({ audiences: ["beta"], paths: ["/a"], translations: { fr: { title: "Maintenance", body: "" } } });
    expect(replaced.json.translations.de).toBeUndefined();
    const cleared = await w.update("edit", m.id, { audiences: [], paths: [], translations: {} });
    expect(cleared.json).toMatchObject({ audiences: [], paths: [], translations: {} });
    expect(cleared.headers.get("etag")).toBe(`"${m.id}.4"`);
    const refused = await w.update("edit", m.id, { paths: ["/[x"] });
    expect(refused.status).toBe(400);
    const audit = (await w.call("GET", `/api/admin/feature/message/audit?messageId=${m.id}`)).json.data;
    expect(audit).toHaveLength(4); // create and three updates: the refused one left nothing
    expect(audit[0].before).toMatchObject({ audiences: ["beta"], translations: { fr: { title: "Maintenance", body: "" } } });
    expect(audit[0].after).toMatchObject({ audiences: [], paths: [], translations: {} });
    expect(audit[3].after).toMatchObject({ audiences: ["staff"], paths: ["/a"] });
  });

  it("D61 D62 audit images written before the new fields read as untargeted, in one language", async () => {
    const image = JSON.stringify({
      id: 999_999,
      feature_id: "old",
      type: "Warning",
      title: "Old",
      body: "",
      start_date: 1,
      expiring_date: 2,
      version: 1,
    });
    await server.query(
      "INSERT INTO message_audit (at, action, message_id, feature_id, client_id, before, after) VALUES ($1, $2, $3, $4, $5, $6, $7)",
      Date.now(),
      "update",
      999_999,
      "old",
      "console",
      image,
      image,
    );
    const r = await w.call("GET", "/api/admin/feature/message/audit?messageId=999999");
    expect(r.status).toBe(200);
    expect(r.json.data[0].after).toMatchObject({ title: "Old", audiences: [], paths: [], translations: {}, language: null });
  });

  it("D61 D62 a preview shows targeting and translations as they would be stored", async () => {
    const r = await w.call("POST", "/api/admin/feature/message/preview", {
      audiences: ["staff", "staff"],
      translations: { "de-ch": { title: "<b>Wartung</b>" } },
    });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ audiences: ["staff"], paths: null, translations: { "de-CH": { title: "Wartung", body: "" } } });
  });
});

/** WatchMessages through grpc-js, read one set at a time. */
function grpcWatch(feature: string, metadata: Record<string, string>, extra: { lang?: string; path?: string } = {}) {
  const md = new grpc.Metadata();
  for (const [k, v] of Object.entries(metadata)) md.set(k, v);
  const client = new grpc.Client(hostPort(server.url), grpc.credentials.createInsecure());
  const method = FeatureStatusService.method.watchMessages;
  const call = client.makeServerStreamRequest(
    `/${FeatureStatusService.typeName}/${method.name}`,
    (m: unknown) => Buffer.from(toBinary(WatchMessagesRequestSchema, m as never)),
    (b: Buffer) => fromBinary(ActiveMessagesSchema, b),
    create(WatchMessagesRequestSchema, { featureId: feature, ...extra }),
    md,
  );
  const queue: ActiveMessages[] = [];
  const waiters: ((m: ActiveMessages) => void)[] = [];
  call.on("data", (m: ActiveMessages) => (waiters.length ? waiters.shift()!(m) : queue.push(m)));
  call.on("error", () => {});
  return {
    next(ms = 5000): Promise<ActiveMessages> {
      if (queue.length) return Promise.resolve(queue.shift()!);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no set within ${ms} ms`)), ms);
        waiters.push((m) => {
          clearTimeout(timer);
          resolve(m);
        });
      });
    },
    pending: () => queue.length,
    close() {
      call.cancel();
      client.close();
    },
  };
}
