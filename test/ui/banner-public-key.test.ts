// D60 <meridian-banner> with a public key, in Chromium, on pages of another
// origin than the server's (a page server of the test's own on loopback: its
// pages are http://127.0.0.1:<port>, the origin the key serves, and
// http://localhost:<port>, one it does not), as the README's snippet puts it
// on a shop's pages: the key's origin gets the messages live; another origin
// (a CORS refusal, which a page sees only as a failed fetch) and a wrong key
// end in data-state="refused" with the reason in the console, never in
// "connecting" for good.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { NO_CHROMIUM, launchChromium, watchedPage } from "../helpers/browser.js";
import { RW, api, draft } from "../helpers/messages.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

let server: TestServer;
let browser: Browser;
let pages: Server;
let pagePort: number;
/** The page the next request to the page server gets. */
let html = "";

beforeAll(async () => {
  if (NO_CHROMIUM) return;
  server = await startTestServer();
  await api(server, await server.key(RW)).create("shop-orders", draft({ type: "Critical", title: "Checkout is slow" }));
  pages = createServer((_, res) =>
    res.writeHead(200, { "content-type": "text/html; charset=utf-8", "content-security-policy": csp() }).end(html),
  );
  // Both address families, so that localhost reaches it whichever Chromium tries first.
  await new Promise<void>((r) => pages.listen({ port: 0, host: "::", ipv6Only: false }, r));
  pagePort = (pages.address() as AddressInfo).port;
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await new Promise((r) => (pages ? pages.close(r) : r(undefined)));
  await server?.close();
});

/** The shop's page policy: scripts and connections to Meridian only, Trusted Types enforced (D49). */
const csp = () =>
  `default-src 'none'; script-src ${server.url}; connect-src ${server.url}; require-trusted-types-for 'script'; trusted-types meridian-banner`;

/** Opens `pageOrigin`'s page holding the README's snippet with `key`; collects the banner's console errors. */
async function shopPage(pageOrigin: string, key: string) {
  html = `<!doctype html><html><head><title>shop</title><script type="module" src="${server.url}/ui/meridian-banner.js"></script></head>
<body><meridian-banner feature="shop-orders" server="${server.url}" api-key="${key}"></meridian-banner><p>shop</p></body></html>`;
  const watched = await watchedPage(browser);
  const errors: string[] = [];
  watched.page.on("console", (m) => {
    if (m.type() === "error" && m.text().startsWith("meridian-banner:")) errors.push(m.text());
  });
  await watched.page.goto(`${pageOrigin}/`);
  return { ...watched, errors };
}

const publicKey = (origins: string[]) => server.key({ clientId: "shop", publicKey: { features: ["shop-orders"], origins } });

describe.skipIf(NO_CHROMIUM)(`D60 <meridian-banner> with a public key in Chromium${NO_CHROMIUM ? ` (${NO_CHROMIUM})` : ""}`, () => {
  it("D60 a public key for the page's origin: the banner on the shop's page shows the feature's messages live", async () => {
    const shop = `http://127.0.0.1:${pagePort}`;
    const { page, errors, violations } = await shopPage(shop, await publicKey([shop]));
    try {
      await page.locator("meridian-banner[data-state=live]").waitFor({ state: "attached", timeout: 5000 });
      expect(await page.locator("meridian-banner .message .title").allTextContents()).toEqual(["Checkout is slow"]);
      expect(errors).toEqual([]);
      expect(await violations()).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it("D60 a page of an origin the key does not serve (CORS refuses it): data-state=refused, and why in the console", async () => {
    const key = await publicKey([`http://127.0.0.1:${pagePort}`]);
    const { page, errors } = await shopPage(`http://localhost:${pagePort}`, key);
    try {
      await page.locator("meridian-banner[data-state=refused]").waitFor({ state: "attached", timeout: 5000 });
      expect(errors).toHaveLength(1);
      expect(errors[0]).toContain(`its origin http://localhost:${pagePort} is not one the key serves`);
      await page.waitForTimeout(2500); // no further attempt: it stays refused, not "connecting"
      expect(await page.locator("meridian-banner").getAttribute("data-state")).toBe("refused");
      expect(errors).toHaveLength(1);
      expect(await page.locator("meridian-banner .message").count()).toBe(0);
    } finally {
      await page.close();
    }
  });

  it("D60 a wrong key on a page public keys serve: data-state=refused with the server's reason in the console", async () => {
    const shop = `http://127.0.0.1:${pagePort}`;
    await publicKey([shop]);
    const { page, errors } = await shopPage(shop, "mrd_aaaaaaaaaaaa_" + "A".repeat(43));
    try {
      await page.locator("meridian-banner[data-state=refused]").waitFor({ state: "attached", timeout: 5000 });
      expect(errors).toEqual(["meridian-banner: the server refused the stream (401 CREDENTIALS_INVALID): invalid or revoked API key"]);
    } finally {
      await page.close();
    }
  });
});
