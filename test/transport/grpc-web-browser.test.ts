// Issue 16 item 6: Google's grpc-web client, in its default text mode
// (application/grpc-web-text), in Chromium, against a real Meridian: a unary
// call, a refused one, and a server-streamed values read of several blocks.
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NO_CHROMIUM, launchChromium } from "../helpers/browser.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { RW, api, draft } from "../helpers/messages.js";
import { TS_RW, tsApi, tsHeaders } from "../helpers/timeseries.js";

let server: TestServer;
beforeAll(async () => {
  if (!NO_CHROMIUM) server = await startTestServer();
});
afterAll(() => server?.close());

describe.skipIf(NO_CHROMIUM)(`grpc-web in Chromium${NO_CHROMIUM ? ` (${NO_CHROMIUM})` : ""}`, () => {
  it("D4 Google's grpc-web client in text mode: unary, a refusal with its gRPC code, and a server-streamed read", async () => {
    const writer = await server.key(RW);
    expect((await api(server, writer).create(null, draft({ title: "seen by grpc-web" }))).status).toBe(201);
    const tsKey = await server.key(TS_RW);
    const ts = tsApi(server, tsKey);
    const d = await ts.dataset();
    const s = await ts.series(d);
    const rows = Array.from({ length: 40_000 }, (_, i) => [
      new Date(Date.UTC(2001, 0, 1) + i * 60_000).toISOString().slice(0, 19),
      i % 7,
      i % 3,
    ]);
    await ts.upload(d, s, rows);

    const bundle = await build({
      entryPoints: [new URL("../browser/grpc-web-client.ts", import.meta.url).pathname],
      bundle: true,
      format: "iife",
      platform: "browser",
      write: false,
      logLevel: "silent",
    });
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      await page.goto(server.url + "/healthz"); // a page of the server's origin: no CORS in the way
      await page.addScriptTag({ content: bundle.outputFiles[0].text });
      const requests: string[] = [];
      page.on("request", (r) => requests.push(r.headers()["content-type"] ?? ""));

      expect(await page.evaluate(([base, key]) => window.grpcWeb.listGlobal(base, key), [server.url, writer])).toEqual({
        titles: ["seen by grpc-web"],
      });
      expect(await page.evaluate(([base]) => window.grpcWeb.listGlobal(base, "mrd_not_a_key"), [server.url])).toEqual({ code: 16 });
      const read = await page.evaluate(([base, headers, dataset, series]) => window.grpcWeb.readValues(base, headers, dataset, series), [
        server.url,
        tsHeaders(tsKey, d),
        d,
        s,
      ] as const);
      expect(read).toEqual({ rows: 40_000, chunks: 3, status: 0 });
      expect(requests.length).toBeGreaterThanOrEqual(3);
      expect(new Set(requests)).toEqual(new Set(["application/grpc-web-text"]));
    } finally {
      await browser.close();
    }
  });
});
