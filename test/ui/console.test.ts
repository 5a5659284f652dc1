// D49 the operator console in Chromium (its page enforces Trusted Types under
// a strict CSP): signing in keeps the credential in sessionStorage only;
// publishing makes a banner on a second page show the message within 1 s;
// the server's field errors appear beside their fields and the preview keeps
// only what the allowlist keeps; a second editor is told of a 412; the audit
// trail is shown; no dialog and no CSP violation anywhere.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { NO_CHROMIUM, bannerPage, launchChromium, watchedPage } from "../helpers/browser.js";
import { RW, api, draft } from "../helpers/messages.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

let server: TestServer;
let browser: Browser;
let key: string;
beforeAll(async () => {
  if (NO_CHROMIUM) return;
  server = await startTestServer();
  key = await server.key({ ...RW, clientId: "ops" });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function signedInConsole(): Promise<Awaited<ReturnType<typeof watchedPage>>> {
  const w = await watchedPage(browser);
  await w.page.goto(`${server.url}/console`);
  await w.page.fill("#sign-in input[name=value]", key);
  await w.page.click("#sign-in button[type=submit]");
  await w.page.locator("#app").waitFor();
  return w;
}

async function listFeature(page: Page, feature: string) {
  await page.fill("#filters input[name=feature]", feature);
  await page.click("#filters button[type=submit]");
}

describe.skipIf(NO_CHROMIUM)(`D49 operator console in Chromium${NO_CHROMIUM ? ` (${NO_CHROMIUM})` : ""}`, () => {
  it("D49 publishing in the console shows on a banner on a second page within 1 s; the credential is in sessionStorage only", async () => {
    const banner = await bannerPage(browser, server.url, "shop", await server.key({ clientId: "shop", scopes: ["platform_iam_featurestatus_read"] }));
    const con = await signedInConsole();
    try {
      await banner.page.locator("meridian-banner[data-state=live]").waitFor({ state: "attached" });
      expect(await con.page.evaluate(() => [Object.keys(sessionStorage), Object.keys(localStorage), document.cookie])).toEqual([["meridian-console-credential"], [], ""]);
      await listFeature(con.page, "shop");
      await con.page.click("#new");
      await con.page.selectOption("#editor select[name=type]", "Warning");
      await con.page.fill("#editor input[name=title]", "Payments are slow");
      await con.page.fill("#editor textarea[name=body]", "<p>Card payments take <b>longer</b> than usual.</p>");
      const t0 = Date.now();
      await con.page.click("#editor button[type=submit]");
      await banner.page.locator("meridian-banner .message .title", { hasText: "Payments are slow" }).waitFor({ timeout: 1000 });
      expect(Date.now() - t0).toBeLessThan(1000);
      await expect.poll(() => con.page.locator("#messages tbody tr").count()).toBe(1);
      for (const w of [banner, con]) {
        expect(w.dialogs).toEqual([]);
        expect(await w.violations()).toEqual([]);
      }
    } finally {
      await banner.page.close();
      await con.page.close();
    }
  });

  it("D15 D20 D49 the server's field errors beside their fields; the preview keeps only what the allowlist keeps", async () => {
    const con = await signedInConsole();
    try {
      await con.page.click("#new");
      await con.page.fill("#editor input[name=title]", "");
      await con.page.fill("#editor textarea[name=body]", '<p>ok</p><img src=x onerror="alert(1)"><script>alert(2)</script><a href="javascript:alert(3)">x</a>');
      await expect.poll(() => con.page.evaluate(() => document.getElementById("preview")!.innerHTML)).toContain("<p>ok</p>");
      expect(await con.page.evaluate(() => document.getElementById("preview")!.innerHTML)).not.toMatch(/<img|<script|onerror|javascript:/i);
      await con.page.click("#editor button[type=submit]");
      await expect.poll(() => con.page.textContent(".error[data-field=title]")).not.toBe("");
      expect(con.dialogs).toEqual([]);
      expect(await con.violations()).toEqual([]);
    } finally {
      await con.page.close();
    }
  });

  it("D49 a preview answered after a save leaves the save's field errors beside their fields", async () => {
    const con = await signedInConsole();
    try {
      await con.page.click("#new");
      await con.page.fill("#editor input[name=title]", "");
      await con.page.fill("#editor textarea[name=body]", "<p>typed just before saving</p>");
      await con.page.click("#editor button[type=submit]"); // before the preview's pause is over
      await expect.poll(() => con.page.evaluate(() => document.getElementById("preview")!.innerHTML)).toContain("typed just before saving");
      expect(await con.page.textContent(".error[data-field=title]")).not.toBe("");
      expect(await con.page.textContent(".error[data-field=body]")).toBe("");
    } finally {
      await con.page.close();
    }
  });

  it("D47 D48 D49 the second editor is told someone else changed the message first; the audit trail shows both", async () => {
    const m = (await api(server, key).create("shared", draft({ title: "Original" }))).json;
    const [a, b] = [await signedInConsole(), await signedInConsole()];
    try {
      for (const w of [a, b]) {
        await listFeature(w.page, "shared");
        await w.page.locator(`#messages tr[data-id="${m.id}"] button`, { hasText: "Edit" }).click();
        await expect.poll(() => w.page.inputValue("#editor input[name=title]")).toBe("Original");
      }
      await a.page.fill("#editor input[name=title]", "By A");
      await a.page.click("#editor button[type=submit]");
      await expect.poll(() => a.page.textContent("#notice")).toContain("saved");
      await b.page.fill("#editor input[name=title]", "By B");
      await b.page.click("#editor button[type=submit]");
      await expect.poll(() => b.page.textContent("#notice")).toContain("Someone else changed");
      expect(await b.page.getAttribute("#notice", "class")).toBe("conflict");
      await expect.poll(() => b.page.inputValue("#editor input[name=title]")).toBe("By A"); // reloaded with A's change
      await b.page.locator(`#messages tr[data-id="${m.id}"] button`, { hasText: "Audit" }).click();
      await expect.poll(() => b.page.locator("#audit tbody tr").allTextContents()).toEqual([expect.stringMatching(/update.*ops.*Original.*By A/), expect.stringMatching(/create.*ops.*Original/)]);
      for (const w of [a, b]) {
        expect(w.dialogs).toEqual([]);
        expect(await w.violations()).toEqual([]);
      }
    } finally {
      await a.page.close();
      await b.page.close();
    }
  });
});
