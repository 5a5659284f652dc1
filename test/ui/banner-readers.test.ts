// The banner for its readers, in Chromium (issue 29 items 3, 4 and 6): a
// dismissal by a person signed in with a token follows them to another
// browser (D63); more than two messages show the most severe and "N more",
// a real button that opens and closes by keyboard; the banner's own words
// in German for a German reader; dates in the reader's locale and time zone.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContextOptions, Page } from "playwright-core";
import { BANNER_PAGE_CSP, NO_CHROMIUM, launchChromium, watchedPage } from "../helpers/browser.js";
import { RW, api, draft } from "../helpers/messages.js";
import { signToken, startTestServer, type TestServer } from "../helpers/server.js";

let server: TestServer;
let browser: Browser;
let writer: ReturnType<typeof api>;
beforeAll(async () => {
  if (NO_CHROMIUM) return;
  server = await startTestServer();
  writer = api(server, await server.key(RW));
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** The banner of `feature` on a page of its own browser context (its own storage), with these attributes and context options. */
async function banner(feature: string, attributes: Record<string, string>, options: BrowserContextOptions = {}) {
  const watched = await watchedPage(browser, options);
  const attrs = Object.entries({ feature, ...attributes })
    .map(([k, v]) => ` ${k}="${v}"`)
    .join("");
  await watched.page.route(`${server.url}/orders/7`, (route) =>
    route.fulfill({
      status: 200,
      headers: { "content-type": "text/html; charset=utf-8", "content-security-policy": BANNER_PAGE_CSP },
      body: `<!doctype html><html><head><title>banner</title><script type="module" src="/ui/meridian-banner.js"></script></head><body><meridian-banner${attrs}></meridian-banner></body></html>`,
    }),
  );
  await watched.page.goto(`${server.url}/orders/7`);
  await watched.page.locator("meridian-banner[data-state=live]").waitFor({ state: "attached" });
  return watched;
}

const readerKey = (feature: string) => server.key({ clientId: feature, scopes: ["platform_iam_featurestatus_read"] });
const personToken = (feature: string, sub: string) =>
  signToken({ client_id: feature, scope: "platform_iam_featurestatus_read", iss: "https://id.example", sub }, { expiresIn: "1h" });
const titles = (page: Page) => page.locator("meridian-banner .message .title").allTextContents();
const visibleTitles = (page: Page) => page.locator("meridian-banner .message .title:visible").allTextContents();

describe.skipIf(NO_CHROMIUM)(`the banner for its readers in Chromium${NO_CHROMIUM ? ` (${NO_CHROMIUM})` : ""}`, () => {
  it("D63 a dismissal in one browser context is honoured in a second context with the same subject, not for another person", async () => {
    await writer.create("follow", draft({ title: "Follows the person" }));
    const first = await banner("follow", { token: await personToken("follow", "alice") });
    const second = await banner("follow", { token: await personToken("follow", "alice") });
    const other = await banner("follow", { token: await personToken("follow", "bob") });
    try {
      await expect.poll(() => titles(second.page)).toEqual(["Follows the person"]);
      await first.page.locator("meridian-banner .message button.dismiss").click();
      await expect.poll(() => titles(first.page)).toEqual([]);
      // The second context has nothing in its storage: its open stream hears the server.
      await expect.poll(() => titles(second.page), { timeout: 3000 }).toEqual([]);
      expect(await second.page.evaluate(() => localStorage.length)).toBe(0);
      await second.page.reload();
      await second.page.locator("meridian-banner[data-state=live]").waitFor({ state: "attached" });
      expect(await titles(second.page)).toEqual([]);
      expect(await titles(other.page)).toEqual(["Follows the person"]);
    } finally {
      await Promise.all([first.page.close(), second.page.close(), other.page.close()]);
    }
  });

  it("D63 a dismissal kept in the browser is by message id and version: read in another language it stays dismissed, edited it shows again", async () => {
    const german = (title: string) => ({ de: { title: `${title} (de)`, body: "<p>Deutsch</p>" } });
    const one = (await writer.create("polyglot", draft({ title: "Polyglot one", translations: german("Polyglot one") }))).json;
    await writer.create("polyglot", draft({ title: "Polyglot two", translations: german("Polyglot two") }));
    const key = await readerKey("polyglot");
    const { page } = await banner("polyglot", { "api-key": key });
    try {
      await expect.poll(async () => (await titles(page)).sort()).toEqual(["Polyglot one", "Polyglot two"]);
      await page.locator(`meridian-banner .message[data-id="${one.id}"] button.dismiss`).click();
      await expect.poll(() => titles(page)).toEqual(["Polyglot two"]);
      // The same browser (its storage), the banner now asking for German (its lang attribute comes first).
      await page.route(`${server.url}/orders/7`, (route) =>
        route.fulfill({
          status: 200,
          headers: { "content-type": "text/html; charset=utf-8", "content-security-policy": BANNER_PAGE_CSP },
          body: `<!doctype html><html><head><title>banner</title><script type="module" src="/ui/meridian-banner.js"></script></head><body><meridian-banner feature="polyglot" api-key="${key}" lang="de"></meridian-banner></body></html>`,
        }),
      );
      await page.reload();
      await page.locator("meridian-banner[data-state=live]").waitFor({ state: "attached" });
      await expect.poll(() => titles(page)).toEqual(["Polyglot two (de)"]);
      // A new version is a new notice: shown again, in German.
      expect((await writer.update("polyglot", one.id, { body: "<p>changed</p>" })).status).toBe(200);
      await expect.poll(async () => (await titles(page)).sort(), { timeout: 3000 }).toEqual(["Polyglot one (de)", "Polyglot two (de)"]);
    } finally {
      await page.close();
    }
  });

  it("D63 a message marked not dismissible has no dismiss button", async () => {
    await writer.create("critical", draft({ type: "Critical", title: "Must read", dismissible: false }));
    const { page } = await banner("critical", { token: await personToken("critical", "alice") });
    try {
      await expect.poll(() => titles(page)).toEqual(["Must read"]);
      expect(await page.locator("meridian-banner .message button").count()).toBe(0);
    } finally {
      await page.close();
    }
  });

  it('more than two messages: the most severe and "N more", opened and closed by keyboard (aria-expanded)', async () => {
    await writer.create("many", draft({ type: "Informational", title: "Info" }));
    await writer.create("many", draft({ type: "Critical", title: "Critical one" }));
    await writer.create("many", draft({ type: "Warning", title: "Warning one" }));
    const { page } = await banner("many", { "api-key": await readerKey("many") });
    try {
      await expect.poll(() => titles(page)).toHaveLength(3);
      expect(await visibleTitles(page)).toEqual(["Critical one"]);
      const more = page.locator("meridian-banner button.more");
      expect(await more.textContent()).toBe("2 more");
      expect(await more.getAttribute("aria-expanded")).toBe("false");
      // Tab from the page: the first message's dismiss button, then "2 more".
      for (let i = 0; i < 4 && !(await more.evaluate((b) => b.matches(":focus"))); i++) await page.keyboard.press("Tab");
      expect(await more.evaluate((b) => b.matches(":focus"))).toBe(true);
      await page.keyboard.press("Enter");
      await expect.poll(() => visibleTitles(page)).toEqual(["Critical one", "Warning one", "Info"]);
      expect(await more.getAttribute("aria-expanded")).toBe("true");
      expect(await more.evaluate((b) => b.matches(":focus"))).toBe(true); // focus stays on the button
      await page.keyboard.press("Space");
      await expect.poll(() => visibleTitles(page)).toEqual(["Critical one"]);
      expect(await more.getAttribute("aria-expanded")).toBe("false");
    } finally {
      await page.close();
    }
  });

  it("D62 the banner's own words in German for a German reader (navigator.languages)", async () => {
    for (const title of ["Eins", "Zwei", "Drei"]) await writer.create("german", draft({ title }));
    const { page } = await banner("german", { "api-key": await readerKey("german") }, { locale: "de-CH" });
    try {
      await expect.poll(() => titles(page)).toHaveLength(3);
      expect(await page.locator("meridian-banner button.more").textContent()).toBe("2 weitere");
      const first = (await visibleTitles(page))[0];
      expect(await page.locator("meridian-banner .message button.dismiss").first().getAttribute("aria-label")).toBe(`Ausblenden: ${first}`);
    } finally {
      await page.close();
    }
  });

  it("dates in the reader's locale and time zone (Intl.DateTimeFormat)", async () => {
    const expiringDate = "2030-03-01T20:00:00Z";
    await writer.create("dated", draft({ title: "Dated", expiringDate }));
    for (const [locale, timezoneId, word] of [
      ["de-DE", "Europe/Berlin", "Bis"],
      ["en-US", "America/New_York", "Until"],
    ] as const) {
      const { page } = await banner("dated", { "api-key": await readerKey("dated") }, { locale, timezoneId });
      try {
        const time = page.locator("meridian-banner .message time");
        await time.waitFor();
        const expected = new Intl.DateTimeFormat([locale], { dateStyle: "medium", timeStyle: "short", timeZone: timezoneId }).format(
          new Date(expiringDate),
        );
        expect(await time.textContent()).toBe(`${word} ${expected}`);
        expect(await time.getAttribute("datetime")).toBe(expiringDate);
      } finally {
        await page.close();
      }
    }
    expect(new Intl.DateTimeFormat(["de-DE"], { dateStyle: "medium", timeZone: "Europe/Berlin" }).format(new Date(expiringDate))).toBe(
      "01.03.2030",
    );
  });
});
