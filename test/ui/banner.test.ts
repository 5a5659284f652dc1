// D49 <meridian-banner> in Chromium, on a page under a strict CSP with Trusted
// Types enforced: a message published through the API shows within 1 s,
// Critical as role="alert"; dismissing is remembered until the message
// changes; expiry by the clock removes it; the payload lists and
// nested-encoding titles never run script (dialogs and CSP violations: 0).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { NO_CHROMIUM, bannerPage, launchChromium, watchedPage } from "../helpers/browser.js";
import { RW, api, draft, iso, xssPayloads } from "../helpers/messages.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

let server: TestServer;
let browser: Browser;
let writer: ReturnType<typeof api>;
let writerKey: string;
beforeAll(async () => {
  if (NO_CHROMIUM) return;
  server = await startTestServer();
  writerKey = await server.key(RW);
  writer = api(server, writerKey);
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** The banner of a feature, read with that feature's own application key (D13: its feature and the global messages). */
async function openBanner(feature: string) {
  return bannerPage(browser, server.url, feature, await server.key({ clientId: feature, scopes: ["platform_iam_featurestatus_read"] }));
}

const titles = (page: Page) => page.locator("meridian-banner .message .title").allTextContents();

describe.skipIf(NO_CHROMIUM)(`D49 <meridian-banner> in Chromium${NO_CHROMIUM ? ` (${NO_CHROMIUM})` : ""}`, () => {
  it("D61 D62 the banner shows its page's messages in the browser's language (path, navigator.languages)", async () => {
    await writer.create(
      "pages",
      draft({ title: "Orders news", paths: ["/orders/**"], translations: { de: { title: "Bestellneuigkeiten" } } }),
    );
    await writer.create("pages", draft({ title: "Help news", paths: ["/help"] }));
    const key = await server.key({ clientId: "pages", scopes: ["platform_iam_featurestatus_read"] });
    const { page, violations } = await bannerPage(browser, server.url, "pages", key, { path: "/orders/7", context: { locale: "de-CH" } });
    try {
      await expect.poll(() => titles(page)).toEqual(["Bestellneuigkeiten"]); // de-CH falls back to de; /help's message is not for this page
      expect(await page.locator("meridian-banner .message .text").first().getAttribute("lang")).toBe("de");
      expect(await violations()).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it("D46 D49 a message published through the API shows within 1 s; Critical is role=alert; dismissal is remembered until the message changes", async () => {
    const { page, dialogs, violations } = await openBanner("orders");
    try {
      await page.locator("meridian-banner[data-state=live]").waitFor({ state: "attached" }); // the first set has arrived
      const t0 = Date.now();
      const m = (
        await writer.create(
          "orders",
          draft({ type: "Critical", title: "Checkout is down", body: '<p>We are on it. <a href="https://status.example">Status</a></p>' }),
        )
      ).json;
      await page.locator("meridian-banner .message").first().waitFor({ timeout: 1000 });
      expect(Date.now() - t0).toBeLessThan(1000);
      expect(await titles(page)).toEqual(["Checkout is down"]);
      const box = page.locator("meridian-banner .message").first();
      expect(await box.getAttribute("role")).toBe("alert");
      expect(await box.locator(".body a").getAttribute("href")).toBe("https://status.example");
      // Keyboard: the dismiss button is reachable and works with Enter.
      await box.locator("button").focus();
      await page.keyboard.press("Enter");
      await expect.poll(() => titles(page)).toEqual([]);
      await page.reload();
      await page.waitForTimeout(500);
      expect(await titles(page)).toEqual([]); // remembered
      await writer.update("orders", m.id, { title: "Checkout is back" });
      await expect.poll(() => titles(page), { timeout: 2000 }).toEqual(["Checkout is back"]); // changed: shown again
      expect(dialogs).toEqual([]);
      expect(await violations()).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it("D19 D49 expiry by the clock removes a message from the banner", async () => {
    const { page } = await openBanner("expiring");
    try {
      await writer.create("expiring", draft({ title: "Brief", expiringDate: iso(2) }));
      await page.locator("meridian-banner .message").first().waitFor({ timeout: 2000 });
      await expect.poll(() => titles(page), { timeout: 5000 }).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it("D20 D49 the payload lists and nested-encoding titles never run script in the banner", async () => {
    const payloads = xssPayloads();
    const sample = payloads.filter((_, i) => i % Math.ceil(payloads.length / 150) === 0);
    let shown = 0;
    for (const { payload } of sample) {
      const body = await writer.create("xss", draft({ title: "t", body: payload }));
      const title = await writer.create("xss", draft({ title: payload.slice(0, 200) || "x", body: "" }));
      shown += Number(body.status === 201) + Number(title.status === 201);
    }
    for (const t of [
      "&lt;img src=x onerror=alert(1)&gt;",
      "&amp;lt;script&amp;gt;alert(2)&amp;lt;/script&amp;gt;",
      "%3Csvg onload=alert(3)%3E",
    ]) {
      shown += Number((await writer.create("xss", draft({ title: t }))).status === 201);
    }
    const { page, dialogs, violations } = await openBanner("xss");
    try {
      await expect.poll(async () => (await titles(page)).length, { timeout: 5000 }).toBe(shown);
      await page.waitForTimeout(500); // any onerror/onload would have fired
      expect(dialogs).toEqual([]);
      expect(await violations()).toEqual([]);
      const scripts = await page.evaluate(
        () =>
          document
            .querySelector("meridian-banner")!
            .shadowRoot!.querySelectorAll("script, iframe, object, embed, [onerror], [onload], [onclick]").length,
      );
      expect(scripts).toBe(0);
    } finally {
      await page.close();
    }
    // The same messages in the operator console's listing.
    const con = await watchedPage(browser);
    try {
      await con.page.goto(`${server.url}/console`);
      await con.page.fill("#sign-in input[name=value]", writerKey);
      await con.page.click("#sign-in button[type=submit]");
      await con.page.fill("#filters input[name=feature]", "xss");
      await con.page.selectOption("#filters select[name=expiry]", "All");
      await con.page.click("#filters button[type=submit]");
      await expect.poll(() => con.page.locator("#messages tbody tr").count()).toBeGreaterThan(50);
      await con.page.waitForTimeout(300);
      expect(con.dialogs).toEqual([]);
      expect(await con.violations()).toEqual([]);
    } finally {
      await con.page.close();
    }
  });

  it("D49 D53 a key revoked while the banner shows: the stream's error event makes it say refused, not a set", async () => {
    const { id, key } = await server.app.backend.apiKeys.create({
      clientId: "revoked",
      roles: [],
      scopes: ["platform_iam_featurestatus_read"],
      projects: [],
    });
    const { page, violations } = await bannerPage(browser, server.url, "revoked", key);
    try {
      await page.locator("meridian-banner[data-state=live]").waitFor({ state: "attached" });
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(e.message));
      await server.app.backend.apiKeys.revoke(id);
      const t0 = Date.now();
      await writer.create("revoked", draft({ title: "Not for a revoked key" })); // wakes the stream at once
      await page.locator("meridian-banner[data-state=refused]").waitFor({ state: "attached", timeout: 2000 });
      // At once, from the error event; not after the reconnection a second later that the key's 401 would also refuse.
      expect(Date.now() - t0).toBeLessThan(900);
      expect(await titles(page)).toEqual([]);
      expect(errors).toEqual([]);
      expect(await violations()).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it("D46 D49 the banner reconnects after a drop and shows what changed meanwhile", async () => {
    const feature = "reconnect";
    const readerKey = await server.key({ clientId: feature, scopes: ["platform_iam_featurestatus_read"] });
    const port = new URL(server.url).port;
    const { page, violations } = await bannerPage(browser, server.url, feature, readerKey);
    try {
      await page.locator("meridian-banner[data-state=live]").waitFor({ state: "attached" });
      // The server goes away (its streams end) and comes back on the same port and database.
      const db = server.db;
      await server.app.close(200);
      server = await startTestServer({ MERIDIAN_DB: db, MERIDIAN_PORT: port });
      writer = api(server, writerKey);
      await writer.create(feature, draft({ title: "After the drop" }));
      await expect.poll(() => titles(page), { timeout: 10_000 }).toEqual(["After the drop"]);
      expect(await violations()).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
