// Debian's Chromium driven by playwright-core, for the browser parts (D41, and
// later the banner and console). .ci/run installs `chromium`; where it is
// absent the browser tests are skipped and say why.
import { existsSync } from "node:fs";
import { chromium, type Browser, type BrowserContextOptions, type Page } from "playwright-core";

const CANDIDATES = [process.env.MERIDIAN_TEST_CHROMIUM, "/usr/bin/chromium", "/usr/bin/chromium-browser"].filter(Boolean) as string[];

export const CHROMIUM = CANDIDATES.find((p) => existsSync(p));
export const NO_CHROMIUM = CHROMIUM
  ? undefined
  : "browser tests skipped: no Chromium (apt-get install chromium, or set MERIDIAN_TEST_CHROMIUM)";

export function launchChromium(): Promise<Browser> {
  // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
  return chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"], headless: true });
}

/** A page that records its dialogs and its CSP violations (an init script is not bound by the page's CSP); `options` set its locale, time zone... */
export async function watchedPage(
  browser: Browser,
  options: BrowserContextOptions = {},
): Promise<{ page: Page; dialogs: string[]; violations: () => Promise<string[]> }> {
  const page = await browser.newPage(options);
  const dialogs: string[] = [];
  page.on("dialog", (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  await page.addInitScript(() => {
    (window as unknown as { violations: string[] }).violations = [];
    document.addEventListener("securitypolicyviolation", (e) =>
      (window as unknown as { violations: string[] }).violations.push(
        `${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber} ${e.sample}`,
      ),
    );
  });
  return { page, dialogs, violations: () => page.evaluate(() => (window as unknown as { violations: string[] }).violations) };
}

/** The banner's test page (D49): a page of the server's origin under a strict CSP with Trusted Types, holding <meridian-banner>. */
export const BANNER_PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; require-trusted-types-for 'script'; trusted-types meridian-banner";

export async function bannerPage(
  browser: Browser,
  serverUrl: string,
  feature: string,
  key: string,
  /** The page's path (D61: the banner asks for its messages), and the browser's settings (D62: its locale). */
  opts: { path?: string; context?: BrowserContextOptions } = {},
) {
  const path = opts.path ?? "/banner-test";
  const watched = await watchedPage(browser, opts.context);
  await watched.page.route(`${serverUrl}${path}`, (route) =>
    route.fulfill({
      status: 200,
      headers: { "content-type": "text/html; charset=utf-8", "content-security-policy": BANNER_PAGE_CSP },
      body: `<!doctype html><html><head><title>banner</title><script type="module" src="/ui/meridian-banner.js"></script></head><body><meridian-banner feature="${feature}" api-key="${key}"></meridian-banner><p>page</p></body></html>`,
    }),
  );
  await watched.page.goto(`${serverUrl}${path}`);
  return watched;
}
