// D38 the single executable, run as an operator would: copied alone into an
// empty directory and started with an environment whose PATH has no node.
// Built by `npm run package`; without it these cases are skipped, saying so.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FeatureStatusService } from "../../src/gen/meridian/featurestatus/v1/feature_status_pb.js";
import { grpcUnary, hostPort } from "../helpers/clients.js";
import { exited, startServe } from "../helpers/cli.js";
import { DuckDBInstance } from "@duckdb/node-api";

const version = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")).version as string;
const BUILT = new URL(`../../dist/meridian-${version}-linux-x64`, import.meta.url).pathname;
const SKIP = !existsSync(BUILT);

const dir = mkdtempSync(join(tmpdir(), "meridian-binary-"));
const bin = join(dir, "meridian");
// This machine's own node lives in /usr/bin: the PATH holds an empty directory only.
const env = {
  PATH: join(dir, "no-node"),
  HOME: dir,
  MERIDIAN_DB: join(dir, "data", "meridian.db"),
  MERIDIAN_CACHE_DIR: join(dir, "cache"),
};
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(args: string[], extra: Record<string, string> = {}) {
  return spawnSync(bin, args, { env: { ...env, ...extra }, encoding: "utf8" });
}

const serve = () => startServe(bin, ["serve"], { ...env, MERIDIAN_PORT: "0", MERIDIAN_METRICS: "127.0.0.1:0" });

describe.skipIf(SKIP)("D38 the single executable, alone, with no node on PATH", () => {
  let server: Awaited<ReturnType<typeof serve>>;
  let writer: string;
  let tsKey: string;
  const DATASET = "5e0c3a3c-0000-4000-8000-000000000001";
  const SERIES = "5e0c3a3c-0000-4000-8000-000000000002";

  beforeAll(async () => {
    copyFileSync(BUILT, bin);
    chmodSync(bin, 0o755);
    mkdirSync(env.PATH);
    expect(spawnSync("/bin/sh", ["-c", "command -v node"], { env }).status).not.toBe(0);
    expect(run(["init"]).status).toBe(0);
    writer = run([
      "apikey",
      "create",
      "--client-id",
      "ops",
      "--role",
      "BackOffice",
      "--scope",
      "platform_iam_featurestatus_readwrite",
    ]).stdout.trim();
    tsKey = run(["apikey", "create", "--client-id", "ts", "--scope", "platform_timeseries_readwrite", "--project", "p1"]).stdout.trim();
    expect(writer).toMatch(/^mrd_/);
    server = await serve();
  });
  afterAll(() => server?.child.kill("SIGKILL"));

  it("D38 --version and --help answer without node", () => {
    expect(run(["--version"])).toMatchObject({ status: 0, stdout: `${version}\n` });
    const help = run(["--help"]);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain("meridian serve");
  });

  it("D38 serves with the server's node flags, on Node 26, and logs so", () => {
    const line = server
      .stderr()
      .split("\n")
      .find((l) => l.includes('"address"'))!;
    expect(JSON.parse(line)).toMatchObject({ node: expect.stringMatching(/^v26\./) });
    expect(server.stderr()).not.toContain("missing"); // node-flags.ts warns when --initial-old-space-size is absent
  });

  it("D38 messages: create, list, update, delete over REST", async () => {
    const h = { "svc-open-api-key": writer, "content-type": "application/json" };
    const now = Date.now();
    const iso = (ms: number) => new Date(ms).toISOString().slice(0, 19) + "Z";
    const created = await fetch(`${server.url}/api/admin/feature/orders/message`, {
      method: "POST",
      headers: h,
      body: JSON.stringify({
        type: "Critical",
        title: "Down <b>now</b>",
        body: "<p>ok</p><script>x</script>",
        startDate: iso(now - 60_000),
        expiringDate: iso(now + 3_600_000),
      }),
    });
    expect(created.status).toBe(201);
    const m = (await created.json()) as { id: number; title: string; body: string };
    expect(m).toMatchObject({ title: "Down now", body: "<p>ok</p>" });
    const listed = (await (await fetch(`${server.url}/api/admin/feature/orders/message`, { headers: h })).json()) as {
      data: { id: number }[];
    };
    expect(listed.data.map((x) => x.id)).toEqual([m.id]);
    const patched = await fetch(`${server.url}/api/admin/feature/orders/message/${m.id}`, {
      method: "PATCH",
      headers: h,
      body: JSON.stringify({ title: "Back" }),
    });
    expect(((await patched.json()) as { title: string }).title).toBe("Back");
    expect((await fetch(`${server.url}/api/admin/feature/orders/message/${m.id}`, { method: "DELETE", headers: h })).status).toBe(204);
  });

  it("D38 D41 D49 /openapi.json, every file of /docs and the banner element are served from the binary's own assets", async () => {
    const banner = await fetch(`${server.url}/ui/meridian-banner.js`);
    expect([banner.status, (await banner.text()).includes("customElements.define")]).toEqual([200, true]);
    const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as { openapi: string; paths: object };
    expect([doc.openapi, Object.keys(doc.paths).length > 10]).toEqual(["3.1.0", true]);
    const html = await (await fetch(`${server.url}/docs`)).text();
    for (const src of [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1])) {
      const r = await fetch(server.url + src);
      expect([src, r.status, (await r.arrayBuffer()).byteLength > 100]).toEqual([src, 200, true]);
    }
  });

  it("D38 a gRPC call with grpc-js", async () => {
    const r = await grpcUnary(hostPort(server.url), FeatureStatusService.method.listGlobalMessages, {}, { "svc-open-api-key": writer });
    expect(r.error).toBeUndefined();
    expect(r.response?.data).toEqual([]);
  });

  it("D38 D30 a time series import by the binary's CLI, read whole and in pages", async () => {
    const h = { "svc-open-api-key": tsKey, "svc-service-id": "timeseries", "svc-project-id": "p1", "content-type": "application/json" };
    const ds = await fetch(`${server.url}/api/ts/dataset`, {
      method: "POST",
      headers: h,
      body: JSON.stringify({ id: DATASET, timeSeriesProperties: [] }),
    });
    expect(ds.status).toBe(201);
    const hd = { ...h, "svc-dataset-id": DATASET };
    const s = await fetch(`${server.url}/api/ts/dataset/${DATASET}/timeseries`, {
      method: "POST",
      headers: hd,
      body: JSON.stringify({ id: SERIES, item: { name: "w" }, dataFields: [{ name: "v", dataType: "Double" }] }),
    });
    expect(s.status).toBe(201);
    const csv = join(dir, "v.csv");
    const t0 = Date.UTC(2024, 0, 1) / 1000;
    writeFileSync(
      csv,
      "timestamp,v\n" +
        Array.from({ length: 50_000 }, (_, i) => `${new Date((t0 + i * 60) * 1000).toISOString().slice(0, 19)}Z,${i / 4}`).join("\n") +
        "\n",
    );
    const imported = run(["import", "--dataset", DATASET, "--series", SERIES, csv]);
    expect(imported.stderr + imported.stdout).toContain("50000");
    expect(imported.status).toBe(0);
    const whole = (await (await fetch(`${server.url}/api/ts/dataset/${DATASET}/timeseries/${SERIES}/values`, { headers: hd })).json()) as {
      data: unknown[][];
    };
    expect(whole.data.length).toBe(50_000);
    expect(whole.data[3]).toEqual([new Date((t0 + 180) * 1000).toISOString().slice(0, 19), 0.75]);
    let pages = 0;
    let rows = 0;
    let cursor: string | undefined;
    do {
      const q = `limit=20000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
      const page = (await (
        await fetch(`${server.url}/api/ts/dataset/${DATASET}/timeseries/${SERIES}/values?${q}`, { headers: { ...hd, "api-version": "3" } })
      ).json()) as { data: unknown[]; cursor?: string };
      rows += page.data.length;
      cursor = page.cursor ?? undefined;
      pages++;
    } while (cursor);
    expect([pages, rows]).toEqual([3, 50_000]);
  });

  it("D38 D64 the binary answers Parquet: its addon's pages are compressed by the zstd of the binary's own node, and DuckDB reads them", async () => {
    const hd = { "svc-open-api-key": tsKey, "svc-service-id": "timeseries", "svc-project-id": "p1", "svc-dataset-id": DATASET };
    const r = await fetch(`${server.url}/api/ts/dataset/${DATASET}/timeseries/${SERIES}/values`, {
      headers: { ...hd, accept: "application/vnd.apache.parquet" },
    });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/vnd.apache.parquet");
    const file = join(dir, "v.parquet");
    writeFileSync(file, Buffer.from(await r.arrayBuffer()));
    const duck = await (await DuckDBInstance.create(":memory:")).connect();
    try {
      const rows = (await duck.runAndReadAll(`SELECT count(*) AS n, sum(v) AS s FROM '${file}'`)).getRowObjectsJS();
      expect(rows).toEqual([{ n: 50_000n, s: (49_999 * 50_000) / 2 / 4 }]);
      const codecs = (await duck.runAndReadAll(`SELECT DISTINCT compression FROM parquet_metadata('${file}')`)).getRowsJS();
      expect(codecs).toEqual([["ZSTD"]]);
    } finally {
      duck.closeSync();
    }
  });

  it("D38 D69 the binary takes Arrow and Parquet uploads back (parquet-wasm's module from its own asset) and imports a .parquet file", async () => {
    const h = { "svc-open-api-key": tsKey, "svc-service-id": "timeseries", "svc-project-id": "p1", "svc-dataset-id": DATASET };
    const path = (s: string) => `${server.url}/api/ts/dataset/${DATASET}/timeseries/${s}/values`;
    const json = async (s: string) => ((await (await fetch(path(s), { headers: h })).json()) as { data: unknown[][] }).data;
    const original = await json(SERIES);
    for (const type of ["application/vnd.apache.arrow.stream", "application/vnd.apache.parquet"]) {
      const body = Buffer.from(await (await fetch(path(SERIES), { headers: { ...h, accept: type } })).arrayBuffer());
      const made = await fetch(`${server.url}/api/ts/dataset/${DATASET}/timeseries`, {
        method: "POST",
        headers: { ...h, "content-type": "application/json" },
        body: JSON.stringify({ item: { name: "copy" }, dataFields: [{ name: "v", dataType: "Double" }] }),
      });
      const copy = ((await made.json()) as { id: string }).id;
      const r = await fetch(path(copy), { method: "POST", headers: { ...h, "content-type": type }, body });
      expect(r.status).toBe(200);
      expect(await json(copy)).toEqual(original);
      if (type.endsWith("parquet")) {
        const file = join(dir, "copy.parquet");
        writeFileSync(file, body);
        await fetch(path(copy), { method: "DELETE", headers: h });
        const imported = run(["import", "--dataset", DATASET, "--series", copy, file]);
        expect(imported.stderr + imported.stdout).toContain("50000 rows read");
        expect(await json(copy)).toEqual(original);
      }
    }
  });

  it("D38 the addons live in a private cache (0700), by content hash; a tampered one is replaced, never loaded", async () => {
    const cache = env.MERIDIAN_CACHE_DIR;
    expect(statSync(cache).mode & 0o777).toBe(0o700);
    const files = readdirSync(cache).sort();
    expect(files).toEqual(
      [expect.stringMatching(/^[0-9a-f]{32}-better_sqlite3\.node$/), expect.stringMatching(/^[0-9a-f]{32}-meridian_native\.node$/)].sort(
        (a, b) => String(a).localeCompare(String(b)),
      ) as never,
    );
    const native = join(
      cache,
      files.find((f) => f.endsWith("meridian_native.node"))!,
    );
    const good = readFileSync(native);
    // Replaced as a new file (the running server keeps the one it mapped).
    writeFileSync(`${native}.evil`, Buffer.from("not an addon"));
    renameSync(`${native}.evil`, native);
    expect(run(["--version"]).status).toBe(0);
    const r = run(["apikey", "list"]);
    expect(r.status).toBe(0);
    expect(readFileSync(native).equals(good)).toBe(true);
  });

  it("D38 a cache directory open to others is refused with one clear line", () => {
    const open = join(dir, "open-cache");
    run(["init"], { MERIDIAN_CACHE_DIR: open }); // loads the addons (--version loads nothing)
    chmodSync(open, 0o777);
    const r = run(["apikey", "list"], { MERIDIAN_CACHE_DIR: open });
    expect(r.status).not.toBe(0);
    // One line naming the setting (D56, issue 39 item 10).
    expect(r.stderr).toBe(
      `meridian apikey list: MERIDIAN_CACHE_DIR=${open}: that folder is open to other users (mode 777); chmod 700 it, or set MERIDIAN_CACHE_DIR to a private folder\n`,
    );
  });

  it("D32 D38 SIGTERM drains: an in-flight read completes and the process exits 0", async () => {
    const hd = { "svc-open-api-key": tsKey, "svc-service-id": "timeseries", "svc-project-id": "p1", "svc-dataset-id": DATASET };
    // In flight: its answer has begun when SIGTERM comes.
    const response = await fetch(`${server.url}/api/ts/dataset/${DATASET}/timeseries/${SERIES}/values`, { headers: hd });
    server.child.kill("SIGTERM");
    expect([response.status, ((await response.json()) as { data: unknown[] }).data.length]).toEqual([200, 50_000]);
    expect(await exited(server.child)).toBe(0);
  });
});

describe.runIf(SKIP)("D38 the single executable", () => {
  it.skip(`not built: run npm run package to test ${BUILT}`, () => {});
});
