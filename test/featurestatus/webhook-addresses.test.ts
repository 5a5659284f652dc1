// D63, issue 39 item 2: a webhook may not reach this machine or its network
// unless an operator allows the host (MERIDIAN_WEBHOOK_HOSTS, or
// MERIDIAN_WEBHOOK_HTTP_HOSTS). The rule is table-tested, then refused at
// registration (REST and the CLI) and at each delivery, on the address the
// host resolves to then.
import { lookup } from "node:dns/promises";
import { mkdtempSync, rmSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { internalAddressKind, WebhookHosts } from "../../src/featurestatus/webhooks/webhook-addresses.js";
import { exited, meridian, serve } from "../helpers/cli.js";
import { dropDatabases, freshDatabase } from "../helpers/databases.js";
import { api, draft, RW } from "../helpers/messages.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { SECRET } from "../helpers/webhooks.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ALLOW = "allow the host in MERIDIAN_WEBHOOK_HOSTS";

describe("D63 the internal address rule (issue 39 item 2)", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["::1", "loopback"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::7f00:1", "loopback"], // IPv4-compatible
    ["64:ff9b::7f00:1", "loopback"], // NAT64
    ["10.0.0.1", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["::ffff:10.0.0.1", "private"],
    ["::ffff:c0a8:101", "private"],
    ["64:ff9b::10.0.0.1", "private"],
    ["fc00::1", "private"],
    ["fd12:3456::1", "private"],
    ["169.254.169.254", "link-local"],
    ["::ffff:169.254.169.254", "link-local"],
    ["fe80::1", "link-local"],
    ["febf::1", "link-local"],
    ["0.0.0.0", "unspecified"],
    ["0.1.2.3", "unspecified"],
    ["::", "unspecified"],
    ["::ffff:0.0.0.0", "unspecified"],
    ["100.64.0.1", "carrier-grade NAT"],
    ["100.127.255.254", "carrier-grade NAT"],
    ["8.8.8.8", undefined],
    ["172.32.0.1", undefined],
    ["100.128.0.1", undefined],
    ["169.255.0.1", undefined],
    ["192.169.0.1", undefined],
    ["2001:4860:4860::8888", undefined],
    ["::ffff:8.8.8.8", undefined],
    ["64:ff9b::808:808", undefined],
    ["fec0::1", undefined],
  ])("D63 %s is %s", (address, kind) => {
    expect(internalAddressKind(address)).toBe(kind);
  });

  it("D63 a host is judged by its name, and by its address when it is one; an allowed host is not judged", () => {
    const none = new WebhookHosts({});
    expect(none.refuseHost("localhost")).toBe(`localhost names this machine; ${ALLOW}`);
    expect(none.refuseHost("LOCALHOST.")).toBe(`localhost names this machine; ${ALLOW}`);
    expect(none.refuseHost("api.localhost")).toBe(`api.localhost names this machine; ${ALLOW}`);
    expect(none.refuseHost("[::ffff:7f00:1]")).toBe(`address ::ffff:7f00:1 is loopback; ${ALLOW}`);
    expect(none.refuseHost("10.0.0.1")).toBe(`address 10.0.0.1 is private; ${ALLOW}`);
    expect(none.refuseHost("hooks.example")).toBeUndefined(); // its addresses are judged when it is resolved
    expect(none.refuseHost("localhost.example")).toBeUndefined();
    expect(none.refuseAddress("hooks.example", "192.168.0.7")).toBe(`address 192.168.0.7 is private; ${ALLOW}`);
    expect(none.refuseAddress("hooks.example", "93.184.215.14")).toBeUndefined();

    const some = new WebhookHosts({ hosts: ["hooks.internal", "10.0.0.1", "localhost", "::1"], httpHosts: ["127.0.0.1"] });
    expect(some.refuseHost("10.0.0.1")).toBeUndefined();
    expect(some.refuseHost("10.0.0.2")).toBe(`address 10.0.0.2 is private; ${ALLOW}`);
    expect(some.refuseHost("127.0.0.1")).toBeUndefined(); // an http: host is allowed to be internal too
    expect(some.refuseHost("localhost")).toBeUndefined();
    expect(some.refuseHost("[::1]")).toBeUndefined();
    expect(some.refuseAddress("HOOKS.internal.", "10.9.9.9")).toBeUndefined();
    expect(some.mayUseHttp("127.0.0.1")).toBe(true);
    expect(some.mayUseHttp("10.0.0.1")).toBe(false);
  });
});

describe("D63 registration refuses an internal address (issue 39 item 2)", () => {
  let server: TestServer;
  let a: ReturnType<typeof api>;
  beforeAll(async () => {
    server = await startTestServer({
      MERIDIAN_WEBHOOK_HOSTS: "10.1.2.3, hooks.internal  [fd00::7]",
      MERIDIAN_WEBHOOK_HTTP_HOSTS: "127.0.0.1",
    });
    a = api(server, await server.key(RW));
  });
  afterAll(() => server.close());
  const register = (url: string) => a.call("POST", "/api/admin/feature/message/webhooks", { url, secret: SECRET });
  const listed = async () => (await a.call("GET", "/api/admin/feature/message/webhooks")).json.data as { url: string }[];

  it.each([
    ["https://169.254.169.254/latest/meta-data/", "address 169.254.169.254 is link-local"],
    ["https://127.0.0.2/", "address 127.0.0.2 is loopback"],
    ["https://[::1]/", "address ::1 is loopback"],
    ["https://[::ffff:127.0.0.1]/", "address ::ffff:7f00:1 is loopback"],
    ["https://0x7f.0.0.2/", "address 127.0.0.2 is loopback"], // judged as the URL spells it: 127.0.0.2
    ["https://10.0.0.1/hook", "address 10.0.0.1 is private"],
    ["https://192.168.0.1/", "address 192.168.0.1 is private"],
    ["https://[fd00::1]/", "address fd00::1 is private"],
    ["https://100.64.1.1/", "address 100.64.1.1 is carrier-grade NAT"],
    ["https://0.0.0.0/", "address 0.0.0.0 is unspecified"],
    ["https://localhost/", "localhost names this machine"],
    ["https://localhost.:8443/", "localhost names this machine"],
    ["https://admin.localhost/", "admin.localhost names this machine"],
  ])("D63 %s is 400 problem+json naming url, and nothing is stored", async (url, why) => {
    const before = await listed();
    const r = await register(url);
    expect(r.status).toBe(400);
    expect(r.headers.get("content-type")).toContain("application/problem+json");
    expect(r.json.errors.url).toEqual([`must not reach an internal address (${why}; ${ALLOW})`]);
    expect(await listed()).toEqual(before);
  });

  it("D63 a host in MERIDIAN_WEBHOOK_HOSTS or MERIDIAN_WEBHOOK_HTTP_HOSTS may be internal; its neighbours may not", async () => {
    for (const url of [
      "https://10.1.2.3/hook",
      "https://hooks.internal/hook",
      "https://[fd00::7]/hook",
      "https://127.0.0.1/hook",
      "http://127.0.0.1:9/hook",
    ]) {
      const r = await register(url);
      expect(r.status, url).toBe(201);
      await a.call("DELETE", `/api/admin/feature/message/webhooks/${r.json.id}`);
    }
    for (const url of ["https://10.1.2.4/hook", "https://[fd00::8]/hook"]) expect((await register(url)).status, url).toBe(400);
  });
});

describe("D63 each delivery judges the address the host resolves to then (issue 39 item 2)", () => {
  const dir = mkdtempSync(join(tmpdir(), "meridian-webhook-addr-"));
  afterAll(async () => {
    await dropDatabases();
    rmSync(dir, { recursive: true, force: true });
  });

  it("D63 meridian webhook add refuses an internal address unless allowed; a server without the allowance refuses to send there, and tries again", async () => {
    const db = await freshDatabase(dir);
    expect(meridian(["init"], { MERIDIAN_DB: db }).status).toBe(0);
    const refused = meridian(["webhook", "add", "--url", "https://10.0.0.1/hook"], { MERIDIAN_DB: db });
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain(`url: must not reach an internal address (address 10.0.0.1 is private; ${ALLOW})`);
    // Registered under a wider allowance, then served without it.
    const added = meridian(["webhook", "add", "--url", "https://10.0.0.1/hook", "--event", "message.created"], {
      MERIDIAN_DB: db,
      MERIDIAN_WEBHOOK_HOSTS: "10.0.0.1",
    });
    expect(added.status).toBe(0);
    const id = /added webhook (\S+) for/.exec(added.stderr)![1];
    const key = meridian(
      ["apikey", "create", "--client-id", "t", "--scope", "platform_iam_featurestatus_readwrite", "--role", "BackOffice"],
      {
        MERIDIAN_DB: db,
      },
    ).stdout.trim();
    const served = await serve({ MERIDIAN_DB: db });
    try {
      const call = (method: string, path: string, body?: unknown) =>
        fetch(served.url + path, {
          method,
          headers: { "svc-open-api-key": key, "content-type": "application/json" },
          body: body === undefined ? undefined : JSON.stringify(body),
        }).then((r) => r.json());
      await call("POST", "/api/admin/feature/message", draft());
      const t0 = Date.now();
      let d: Record<string, unknown> | undefined;
      while (
        Date.now() - t0 < 10_000 &&
        !(((d = (await call("GET", `/api/admin/feature/message/webhooks/${id}/deliveries`)).data[0])?.attempts as number) >= 2)
      )
        await sleep(200);
      expect(d).toMatchObject({ status: "pending", lastError: `address 10.0.0.1 is private; ${ALLOW}` });
      expect(d!.attempts).toBeGreaterThanOrEqual(2); // a refusal is a failed attempt, tried again
      expect(d!.lastStatus ?? null).toBeNull(); // nothing was sent
      expect(served.stderr()).toContain(`address 10.0.0.1 is private; ${ALLOW}`); // and logged
    } finally {
      served.child.kill("SIGKILL");
      await exited(served.child);
    }
  }, 90_000); // five runs of the real command and a start

  it("D63 a name that resolves to an internal address is registered, and refused at delivery after resolving it (DNS rebinding)", async (ctx) => {
    // This machine's own name: /etc/hosts gives it a loopback (Debian: 127.0.1.1) or the container's private address.
    const name = hostname();
    const addresses = await lookup(name, { all: true }).catch(() => []);
    const internal = addresses.find((x) => internalAddressKind(x.address));
    if (!internal || new WebhookHosts({}).refuseHost(name)) ctx.skip(`${name} does not resolve to an internal address here`);
    const server = await startTestServer({});
    try {
      const a = api(server, await server.key(RW));
      const hook = await a.call("POST", "/api/admin/feature/message/webhooks", { url: `https://${name}:8443/hook`, secret: SECRET });
      expect(hook.status).toBe(201);
      await a.create(null, draft());
      const t0 = Date.now();
      let d: Record<string, unknown> | undefined;
      while (
        Date.now() - t0 < 8000 &&
        !(d = (await a.call("GET", `/api/admin/feature/message/webhooks/${hook.json.id}/deliveries`)).json.data[0])?.lastError
      )
        await sleep(200);
      expect(d).toMatchObject({ status: "pending", attempts: 1 });
      expect(d!.lastError).toMatch(new RegExp(`^address \\S+ is (${["loopback", "private", "link-local"].join("|")}); ${ALLOW}$`));
    } finally {
      await server.close();
    }
  });
});
