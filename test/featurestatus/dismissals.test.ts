// D63 dismissals that follow a person: a reader signed in with a bearer token
// (its sub claim) dismisses a message on the server, per message version, and
// every device of that person reads it as dismissed (listings and streams);
// API keys name no person (403 DISMISSAL_NEEDS_SUBJECT); a Critical message
// may be marked not dismissible (the POST is 409 MESSAGE_NOT_DISMISSIBLE).
// Through a real server over REST, Connect and gRPC, on either backend.
import { describe, expect, it } from "vitest";
import { Code, ConnectError } from "@connectrpc/connect";
import { FeatureStatusService, type ActiveMessages } from "../../src/gen/meridian/featurestatus/v1/feature_status_pb.js";
import { connectClient, grpcUnary } from "../helpers/clients.js";
import { draft, useMessageServer } from "../helpers/messages.js";
import { checkAnswer } from "../helpers/openapi.js";
import { bearer, signToken } from "../helpers/server.js";
import { openSse } from "../helpers/sse.js";

const t = useMessageServer();

/** A reader of feature `feature` signed in as `sub`; each call is a fresh token, as another device would hold. */
function reader(sub: string, feature = "orders") {
  return signToken({ client_id: feature, scope: "platform_iam_featurestatus_read", iss: "https://id.example", sub });
}

async function rest(method: string, path: string, headers: Record<string, string>) {
  const r = await fetch(t.server.url + path, { method, headers });
  const text = await r.text();
  await checkAnswer(t.server.url, method, path, r.status, r.headers.get("content-type"), text); // D41
  return { status: r.status, json: text ? JSON.parse(text) : undefined };
}

const dismissal = (feature: string | null, id: number) =>
  feature === null ? `/api/admin/feature/message/${id}/dismissal` : `/api/admin/feature/${feature}/message/${id}/dismissal`;

async function dismissedIn(feature: string, headers: Record<string, string>): Promise<Record<number, boolean>> {
  const { status, json } = await rest("GET", `/api/admin/feature/${feature}/message`, headers);
  expect(status).toBe(200);
  return Object.fromEntries((json.data as { id: number; dismissed: boolean }[]).map((m) => [m.id, m.dismissed]));
}

async function count(messageId: number): Promise<number> {
  // count(*) is a bigint on PostgreSQL (a string to postgres.js), a number on SQLite.
  const [row] = await t.server.query<{ n: number | string }>(
    "SELECT count(*) AS n FROM message_dismissals WHERE message_id = $1",
    messageId,
  );
  return Number(row.n);
}

describe("D63 dismissal that follows the person", () => {
  it("D63 a subject's dismissal is honoured on its other devices and for no one else", async () => {
    const m = (await t.a.create("orders", draft({ title: "Follows Alice" }))).json;
    expect(m).toMatchObject({ dismissible: true, dismissed: false });
    const laptop = bearer(await reader("alice"));
    expect((await rest("POST", dismissal("orders", m.id), laptop)).status).toBe(204);
    const phone = bearer(await reader("alice"));
    expect((await dismissedIn("orders", phone))[m.id]).toBe(true);
    expect((await dismissedIn("orders", bearer(await reader("bob"))))[m.id]).toBe(false);
    expect((await dismissedIn("orders", { "svc-open-api-key": t.key }))[m.id]).toBe(false);
  });

  it("D61 D63 a reader dismisses only a message its listing holds: another audience's is not found, and its read by id says dismissed", async () => {
    const m = (await t.a.create("orders", draft({ title: "Staff only", audiences: ["staff"] }))).json;
    expect((await rest("POST", dismissal("orders", m.id), bearer(await reader("carol")))).status).toBe(404);
    expect(await count(m.id)).toBe(0);
    const staff = () => signToken({ client_id: "orders", scope: "platform_iam_featurestatus_read", sub: "dave", groups: ["staff"] });
    expect((await rest("POST", dismissal("orders", m.id), bearer(await staff()))).status).toBe(204);
    expect((await rest("GET", `/api/admin/feature/orders/message/${m.id}`, bearer(await staff()))).json).toMatchObject({
      id: m.id,
      dismissed: true,
    });
  });

  it("D47 D63 a reader's read by id is named by its dismissal too: the ETag read before a dismissal is not a 304 after it", async () => {
    const m = (await t.a.create("orders", draft({ title: "Revalidated" }))).json;
    const path = `/api/admin/feature/orders/message/${m.id}`;
    const before = await fetch(t.server.url + path, { headers: bearer(await reader("erin")) });
    const etag = before.headers.get("etag")!;
    expect(etag).toMatch(/^W\//);
    expect((await fetch(t.server.url + path, { headers: { ...bearer(await reader("erin")), "if-none-match": etag } })).status).toBe(304);
    expect((await rest("POST", dismissal("orders", m.id), bearer(await reader("erin")))).status).toBe(204);
    const after = await fetch(t.server.url + path, { headers: { ...bearer(await reader("erin")), "if-none-match": etag } });
    expect(after.status).toBe(200);
    expect(((await after.json()) as { dismissed: boolean }).dismissed).toBe(true);
  });

  it("D63 a new version of a dismissed message is not dismissed", async () => {
    const m = (await t.a.create("orders", draft({ title: "Version one" }))).json;
    const alice = bearer(await reader("alice"));
    expect((await rest("POST", dismissal("orders", m.id), alice)).status).toBe(204);
    expect((await dismissedIn("orders", alice))[m.id]).toBe(true);
    expect((await t.a.update("orders", m.id, { title: "Version two" })).status).toBe(200);
    expect((await dismissedIn("orders", alice))[m.id]).toBe(false);
    expect((await rest("POST", dismissal("orders", m.id), alice)).status).toBe(204); // dismissing again: the new version
    expect((await dismissedIn("orders", alice))[m.id]).toBe(true);
  });

  it("D63 a global message is dismissed on the global route and shows so in a feature's listing", async () => {
    const g = (await t.a.create(null, draft({ title: "Everyone" }))).json;
    const alice = bearer(await reader("alice"));
    expect((await rest("POST", dismissal("orders", g.id), alice)).json.reason).toBe("MESSAGE_NOT_FOUND"); // not the feature's
    expect((await rest("POST", dismissal(null, g.id), alice)).status).toBe(204);
    expect((await dismissedIn("orders", alice))[g.id]).toBe(true);
    const { json } = await rest("GET", "/api/admin/feature/message", alice);
    expect(json.data.find((x: { id: number }) => x.id === g.id).dismissed).toBe(true);
  });

  it("D63 an API key names no person: the POST is 403 DISMISSAL_NEEDS_SUBJECT and nothing is stored", async () => {
    const m = (await t.a.create("orders", draft())).json;
    const readKey = await t.server.key({ clientId: "orders", scopes: ["platform_iam_featurestatus_read"] });
    for (const key of [t.key, readKey]) {
      const r = await rest("POST", dismissal("orders", m.id), { "svc-open-api-key": key });
      expect(r.status).toBe(403);
      expect(r.json.reason).toBe("DISMISSAL_NEEDS_SUBJECT");
    }
    expect(await count(m.id)).toBe(0);
  });

  it("D63 a token without sub cannot dismiss either", async () => {
    const m = (await t.a.create("orders", draft())).json;
    const token = await signToken({ client_id: "orders", scope: "platform_iam_featurestatus_read" });
    expect((await rest("POST", dismissal("orders", m.id), bearer(token))).json.reason).toBe("DISMISSAL_NEEDS_SUBJECT");
    expect(await count(m.id)).toBe(0);
  });

  it("D63 a message marked not dismissible: listed so, and its dismissal is 409 MESSAGE_NOT_DISMISSIBLE with nothing stored", async () => {
    const m = (await t.a.create("orders", draft({ type: "Critical", title: "Must read", dismissible: false }))).json;
    expect(m.dismissible).toBe(false);
    const alice = bearer(await reader("alice"));
    const r = await rest("POST", dismissal("orders", m.id), alice);
    expect(r.status).toBe(409);
    expect(r.json.reason).toBe("MESSAGE_NOT_DISMISSIBLE");
    expect(await count(m.id)).toBe(0);
    const { json } = await rest("GET", "/api/admin/feature/orders/message", alice);
    expect(json.data.find((x: { id: number }) => x.id === m.id)).toMatchObject({ dismissible: false, dismissed: false });
  });

  it("D63 only a Critical message may be marked not dismissible (400 naming dismissible, nothing stored)", async () => {
    const r = await t.a.create("orders", draft({ type: "Warning", title: "Not critical", dismissible: false }));
    expect(r.status).toBe(400);
    expect(Object.keys(r.json.errors)).toEqual(["dismissible"]);
    const c = (await t.a.create("orders", draft({ type: "Critical", dismissible: false }))).json;
    const down = await t.a.update("orders", c.id, { type: "Warning" });
    expect(down.status).toBe(400);
    expect(Object.keys(down.json.errors)).toEqual(["dismissible"]);
    expect((await t.a.update("orders", c.id, { type: "Warning", dismissible: true })).json).toMatchObject({
      type: "Warning",
      dismissible: true,
    });
  });

  it("D63 a dismissal needs read access to the scope: another feature's reader is 403, an unknown message 404", async () => {
    const m = (await t.a.create("orders", draft())).json;
    const other = bearer(await reader("alice", "billing"));
    expect((await rest("POST", dismissal("orders", m.id), other)).status).toBe(403);
    const alice = bearer(await reader("alice"));
    expect((await rest("POST", dismissal("orders", 2_000_000_000), alice)).json.reason).toBe("MESSAGE_NOT_FOUND");
    expect(await count(m.id)).toBe(0);
  });

  it("D63 a dismissal goes with its message", async () => {
    const m = (await t.a.create("orders", draft())).json;
    expect((await rest("POST", dismissal("orders", m.id), bearer(await reader("alice")))).status).toBe(204);
    expect(await count(m.id)).toBe(1);
    expect((await t.a.remove("orders", m.id)).status).toBe(204);
    expect(await count(m.id)).toBe(0);
  });

  it("D63 streams: a dismissal on one device reaches the same person's open stream, marked dismissed", async () => {
    const m = (await t.a.create("stream", draft({ title: "Live" }))).json;
    const s = await openSse(`${t.server.url}/api/admin/feature/stream/message/stream`, bearer(await reader("carol", "stream")));
    try {
      const sets = async () => {
        for (;;) {
          const e = await s.next(15_000); // content, not latency: a loaded CI machine took over 5 s once
          if (e.event === "messages") return JSON.parse(e.data!);
        }
      };
      const first = await sets();
      expect(first.data.find((x: { id: number }) => x.id === m.id).dismissed).toBe(false);
      expect((await rest("POST", dismissal("stream", m.id), bearer(await reader("carol", "stream")))).status).toBe(204);
      expect((await sets()).data.find((x: { id: number }) => x.id === m.id).dismissed).toBe(true);
    } finally {
      s.close();
    }
  });

  it("D63 D61 streams: a person's dismissed mark holds while another audience's messages come and go, and goes at a new version", async () => {
    const m = (await t.a.create("kept", draft({ title: "Kept" }))).json;
    const token = () => signToken({ client_id: "kept", scope: "platform_iam_featurestatus_read", sub: "dana", groups: ["staff"] });
    const s = await openSse(`${t.server.url}/api/admin/feature/kept/message/stream`, bearer(await token()));
    try {
      const sets = async () => {
        for (;;) {
          const e = await s.next(15_000); // content, not latency: a loaded CI machine took over 5 s once
          if (e.event === "messages") return JSON.parse(e.data!) as { data: { id: number; title: string; dismissed: boolean }[] };
        }
      };
      await sets();
      expect((await rest("POST", dismissal("kept", m.id), bearer(await token()))).status).toBe(204);
      expect((await sets()).data.find((x) => x.id === m.id)?.dismissed).toBe(true);
      // Writes this reader's view does not see change nothing it is sent; the next one it sees keeps the mark.
      const others = (await t.a.create("kept", draft({ title: "For customers", audiences: ["customers"] }))).json;
      await t.a.remove("kept", others.id);
      await t.a.create("kept", draft({ title: "For staff", audiences: ["staff"] }));
      const next = await sets();
      expect(next.data.map((x) => x.title)).toContain("For staff");
      expect(next.data.map((x) => x.title)).not.toContain("For customers");
      expect(next.data.find((x) => x.id === m.id)?.dismissed).toBe(true);
      await t.a.update("kept", m.id, { title: "Kept, changed" });
      expect((await sets()).data.find((x) => x.id === m.id)).toMatchObject({ title: "Kept, changed", dismissed: false });
    } finally {
      s.close();
    }
  });

  it("D63 WatchMessages over Connect: the person's stream is sent the set again, the message marked dismissed", async () => {
    const m = (await t.a.create("watched", draft({ title: "Watched" }))).json;
    const client = connectClient(FeatureStatusService, t.server.url);
    const abort = new AbortController();
    const sets = client
      .watchMessages({ featureId: "watched" }, { headers: bearer(await reader("frank", "watched")), signal: abort.signal })
      [Symbol.asyncIterator]();
    try {
      const first = (await sets.next()).value as ActiveMessages;
      expect(first.data.find((x) => x.id === m.id)?.dismissed).toBe(false);
      await client.dismissFeatureMessage({ featureId: "watched", messageId: m.id }, { headers: bearer(await reader("frank", "watched")) });
      const second = (await sets.next()).value as ActiveMessages;
      expect(second.data.find((x) => x.id === m.id)?.dismissed).toBe(true);
      expect(second.eventId).not.toBe(first.eventId);
    } finally {
      abort.abort();
    }
  });

  it("D63 over Connect and gRPC: dismissed by a token's subject, refused for an API key", async () => {
    const m = (await t.a.create("orders", draft({ title: "Over RPC" }))).json;
    const client = connectClient(FeatureStatusService, t.server.url);
    const dave = bearer(await reader("dave"));
    await client.dismissFeatureMessage({ featureId: "orders", messageId: m.id }, { headers: dave });
    const listed = await client.listFeatureMessages({ featureId: "orders" }, { headers: dave });
    expect(listed.data.find((x) => x.id === m.id)?.dismissed).toBe(true);
    const refused = await client
      .dismissFeatureMessage({ featureId: "orders", messageId: m.id }, { headers: { "svc-open-api-key": t.key } })
      .catch((e: unknown) => e);
    expect(ConnectError.from(refused).code).toBe(Code.PermissionDenied);

    const g = (await t.a.create(null, draft({ title: "Global over gRPC" }))).json;
    const address = new URL(t.server.url).host;
    const erin = bearer(await reader("erin"));
    const done = await grpcUnary(address, FeatureStatusService.method.dismissGlobalMessage, { messageId: g.id }, erin);
    expect(done.error).toBeUndefined();
    const list = await grpcUnary(address, FeatureStatusService.method.listGlobalMessages, {}, erin);
    expect(list.response!.data.find((x) => x.id === g.id)?.dismissed).toBe(true);
    const critical = (await t.a.create(null, draft({ type: "Critical", dismissible: false }))).json;
    const no = await grpcUnary(address, FeatureStatusService.method.dismissGlobalMessage, { messageId: critical.id }, erin);
    expect(no.error?.code).toBe(9); // FAILED_PRECONDITION
  });
});
