// D20 D49 one allowlist of HTML: the banner's copy (ui/meridian-banner.js, a
// file served as it is, with no build step and no dependency) is pinned equal
// to the server's (src/featurestatus/sanitize.ts), as the browser loads it
// from a running server, and the banner keeps what it lists and nothing else.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { BODY_ALLOWLIST } from "../../src/featurestatus/messages/sanitize.js";
import { NO_CHROMIUM, launchChromium } from "../helpers/browser.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

/** Evaluated in the page as text: vitest would rewrite an import() in a function it hands over. */
const IMPORT_BANNER = 'import("/ui/meridian-banner.js")';

let server: TestServer;
let browser: Browser;
let page: Page;
beforeAll(async () => {
  if (NO_CHROMIUM) return;
  server = await startTestServer();
  browser = await launchChromium();
  page = await browser.newPage();
  await page.goto(`${server.url}/healthz`); // the server's origin, for the module's import
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe.skipIf(NO_CHROMIUM)(`D20 D49 one allowlist${NO_CHROMIUM ? ` (${NO_CHROMIUM})` : ""}`, () => {
  it("D20 D49 the banner's allowlist, as served, equals the server's: the same elements with the same attributes", async () => {
    const served = await page.evaluate(`${IMPORT_BANNER}.then((m) => m.BODY_ALLOWLIST)`);
    expect(served).toEqual(BODY_ALLOWLIST);
  });

  it("D20 D49 the banner keeps each listed element with its listed attributes, and drops any other element or attribute", async () => {
    const listed = Object.entries(BODY_ALLOWLIST)
      .map(([tag, attributes]) => `<${tag} title="t"${attributes.map((a) => ` ${a}="https://x.example/"`).join("")}>${tag}</${tag}>`)
      .join("");
    const html = `${listed}<span>s</span><svg><a href="https://x.example/">v</a></svg>`;
    // Each element kept, by name, with its attributes (rel is the banner's own, on links).
    const kept = await page.evaluate(`${IMPORT_BANNER}.then((m) =>
      Object.fromEntries([...m.bodyFragment(${JSON.stringify(html)}).querySelectorAll("*")]
        .map((el) => [el.localName, el.getAttributeNames().filter((n) => n !== "rel")])))`);
    expect(kept).toEqual(BODY_ALLOWLIST);
  });
});
