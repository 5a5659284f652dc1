// D59 generated clients are tested: from the /openapi.json a real server
// serves, two generators make TypeScript clients into a temporary folder,
// openapi-typescript (types) with openapi-fetch, and @hey-api/openapi-ts
// (runtime code: an SDK function per operation). The programs in
// test/generated-clients/ use them without a cast; tsc --strict compiles them
// (a change of the protos or the document that breaks a generated client fails
// here), and the compiled programs round-trip messages and values through the
// server. One generation per generator and one tsc run for the file.
import { execFile } from "node:child_process";
import { copyFileSync, mkdtempSync, readdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { createClient as heyApi } from "@hey-api/openapi-ts";
import openapiTS, { astToString } from "openapi-typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RW } from "../helpers/messages.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { PROJECT, TS_RW } from "../helpers/timeseries.js";

const run = promisify(execFile);
const PROGRAMS = new URL("../generated-clients/", import.meta.url);
const TSC = realpathSync("node_modules/.bin/tsc");

let server: TestServer;
let key: string;
let dir: string;
/** tsc's diagnostics, one per line, by the file they are in. */
let diagnostics: string[];

beforeAll(async () => {
  server = await startTestServer();
  key = await server.key({ roles: RW.roles, scopes: [...RW.scopes, ...TS_RW.scopes], projects: TS_RW.projects });
  dir = mkdtempSync(join(tmpdir(), "meridian-clients-"));
  const document = await (await fetch(server.url + "/openapi.json")).text();
  writeFileSync(join(dir, "openapi.json"), document);

  await Promise.all([
    (async () => writeFileSync(join(dir, "schema.ts"), astToString(await openapiTS(JSON.parse(document)))))(),
    heyApi({
      input: join(dir, "openapi.json"),
      output: { path: join(dir, "hey"), module: { extension: ".js" } },
      plugins: ["@hey-api/client-fetch"],
      logs: { level: "silent", file: false },
    }),
  ]);
  for (const file of readdirSync(PROGRAMS)) copyFileSync(new URL(file, PROGRAMS), join(dir, file));
  symlinkSync(realpathSync("node_modules"), join(dir, "node_modules"), "dir");
  writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }));
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        lib: ["ES2022", "DOM", "DOM.Iterable"],
        types: [],
        skipLibCheck: true,
      },
      include: ["*.ts", "hey/**/*.ts"],
    }),
  );
  // Emits even with errors (the tests below report them); exit status 2 then.
  const tsc = await run(process.execPath, [TSC, "-p", join(dir, "tsconfig.json"), "--pretty", "false"], { cwd: dir }).catch(
    (e: unknown) => e as { stdout: string },
  );
  diagnostics = tsc.stdout.split("\n").filter((l) => l.trim() !== "");
}, 180_000);

afterAll(async () => {
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The compiled program's round trip, run by Node in a process of its own. */
async function roundTrip(program: string): Promise<Record<string, unknown>> {
  const script = `const { roundTrip } = await import(${JSON.stringify(pathToFileURL(join(dir, program)).href)});
process.stdout.write(JSON.stringify(await roundTrip(process.env.BASE_URL, process.env.KEY, process.env.PROJECT)));`;
  const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], {
    cwd: dir,
    env: { ...process.env, BASE_URL: server.url, KEY: key, PROJECT },
  });
  return JSON.parse(stdout);
}

/** What both clients must have seen: the server's answers, typed by the document. */
function expectRoundTrip(o: Record<string, unknown>, feature: string): void {
  const created = o.created as { id: number; featureId: string; type: string; title: string };
  expect(o.cellIsExact).toBe(true);
  expect(created).toMatchObject({ featureId: feature, type: "Warning", title: "Maintenance" });
  expect(o.listed).toContain(created.id);
  expect(o.etag).toMatch(/^".+"$/);
  expect(o.patched).toMatchObject({ id: created.id, title: "Maintenance, longer", type: "Warning" });
  expect(o.staleStatus).toBe(412);
  expect(o.deleteStatus).toBe(204);
  expect(o.listedAfterDelete).not.toContain(created.id);
  if (o.targeted !== undefined) {
    // D61, D62 through the generated types: targeting and translations in, the chosen language out.
    expect(o.targeted).toMatchObject({
      audiences: ["staff"],
      paths: ["/orders/**"],
      translations: { de: { title: "Inventur", body: "<b>Freitag</b>" } },
    });
    expect(o.german).toEqual([{ title: "Inventur", language: "de", contentLanguage: "de" }]);
  }
  expect(o.uploaded).toBe(20);
  const rows = o.rows as unknown[][];
  expect(rows).toHaveLength(20);
  expect(rows[0]).toEqual(["2026-01-01T00:00:00", 10, 1]);
  expect(rows[7]).toEqual(["2026-01-01T00:07:00", null, 0]);
  // row[1] is a number at runtime, read through the generated type without a cast.
  expect(o.numbers).toHaveLength(19);
  expect((o.numbers as number[])[1]).toBe(10.25);
  expect(o.pageRows).toBe(20); // limit 5 is clamped up to the smallest page
  expect(o.pageCursor).toBeUndefined();
  expect((o.chart as unknown[]).length).toBeGreaterThanOrEqual(2);
  expect(o.many).toBe(1);
  expect((o.rowsAfterDelete as unknown[][]).map((r) => r[0])).toEqual(rows.slice(0, 10).map((r) => r[0]));
  if (o.arrow !== undefined) {
    // D64: asked for by the document's media type, the read answers an Arrow stream (its continuation marker first).
    expect(o.arrow).toMatchObject({ marker: [255, 255, 255, 255], bytes: expect.any(Number) });
    expect((o.arrow as { bytes: number }).bytes).toBeGreaterThan(100);
  }
}

describe("D59 a client generated by openapi-typescript with openapi-fetch", () => {
  it("D59 compiles under tsc --strict, generated types and the program using them", () => {
    expect(diagnostics.filter((d) => d.startsWith("schema.ts") || d.startsWith("openapi-fetch-client.ts"))).toEqual([]);
  });

  it("D59 D61 D62 D64 round-trips create (targeted, translated), list in a language, patch with If-Match, delete, upload, values and chart with typed rows, and reads Arrow by the document's media type", async () => {
    const outcome = await roundTrip("openapi-fetch-client.js");
    expect(outcome.targeted, "the D61/D62 steps ran").toBeDefined();
    expect(outcome.arrow, "the D64 step ran").toBeDefined();
    expectRoundTrip(outcome, "generated-ts");
  });
});

describe("D59 a client generated by @hey-api/openapi-ts (runtime code)", () => {
  it("D59 compiles under tsc --strict, the generated SDK and the program using it", () => {
    expect(diagnostics.filter((d) => d.startsWith("hey") || d.startsWith("hey-api-client.ts"))).toEqual([]);
  });

  it("D59 round-trips create, list, patch with If-Match, delete, upload, values and chart with typed rows", async () => {
    expectRoundTrip(await roundTrip("hey-api-client.js"), "generated-hey");
  });

  it("D59 tsc reported nothing else", () => {
    expect(diagnostics).toEqual([]);
  });
});
