// Debian's Chromium driven by playwright-core, for the browser parts (D41, and
// later the banner and console). .ci/run installs `chromium`; where it is
// absent the browser tests are skipped and say why.
import { existsSync } from "node:fs";
import { chromium, type Browser, type BrowserContextOptions, type Page } from "playwright-core";
import { expect } from "vitest";

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

/** A signed-in explorer page (issue 43) with the chart reads it made, in order. */
export interface ExplorerPage {
  page: Page;
  dialogs: string[];
  violations: () => Promise<string[]>;
  charts: URL[];
}

/**
 * /ui/explorer.html in a new page, signed in with `key` through its form (not
 * signed in when `key` is null); `options` set the viewport, device pixel
 * ratio, time zone... (a 1100 x 800 viewport at ratio 1 unless given).
 */
export async function explorerPage(
  browser: Browser,
  serverUrl: string,
  key: string | null,
  options: BrowserContextOptions = {},
): Promise<ExplorerPage> {
  const w = await watchedPage(browser, { viewport: { width: 1100, height: 800 }, deviceScaleFactor: 1, ...options });
  const charts: URL[] = [];
  w.page.on("request", (r) => {
    if (r.url().includes("/values/chart")) charts.push(new URL(r.url()));
  });
  await w.page.goto(`${serverUrl}/ui/explorer.html`);
  if (key !== null) {
    await w.page.fill("#sign-in input[name=value]", key);
    await w.page.click("#sign-in button[type=submit]");
    await w.page.locator("#app").waitFor();
  }
  return { ...w, charts };
}

/** Opens an explorer link and waits until its view is drawn (the link's range, when it names one: a link to the page open is a new hash only, and the view before it is drawn already). */
export async function openExplorerLink(page: Page, url: string): Promise<void> {
  await page.goto(url);
  const h = new URLSearchParams(new URL(url).hash.slice(1));
  const range = h.get("from") && h.get("to") ? `${h.get("from")} to ${h.get("to")}: ` : "";
  await expect.poll(() => page.textContent("#summary")).toMatch(new RegExp(`^${range}\\d+ rows drawn at \\d+ pixel columns`));
}

/** How a reference drawing gets its rows: every row of the range, or resampled ones that must differ. */
export type ExplorerDrawing = "every" | "thinned" | "coarse" | "joined";

/**
 * Draws, in the explorer's page and by its own module's plot(), the view
 * [from, to] of `series` (one id or several, overlaid in that order, with
 * their names and units and the page's time zone) from rows the test chose:
 * "every" row of the range (the values read), and, to show that a comparison
 * can fail, the chart read with every other row left out ("thinned"), the
 * chart read of half the width ("coarse"), or every row but those with
 * missing values ("joined"), of each series. Answers the number of pixels
 * where "every"'s drawing differs from the page's own canvas (`differing`)
 * and each other drawing from "every"'s (`vsEvery`); per series, where it
 * alone on the same axes, from its rows of the chart read (the many-series
 * one for several), differs from it alone from every row (`perSeries`); the
 * canvases' sizes and the numbers of rows. Leaves the canvases in
 * window.explorerDrawings.
 */
export async function compareDrawings(
  page: Page,
  view: { project: string; dataset: string; series: string | string[]; from: number; to: number },
  drawings: ExplorerDrawing[],
) {
  // The explorer's own module, the one the page runs (a module is loaded once), draws the references.
  // Given as text: the test's own transform would rewrite an import() written here.
  await page.evaluate(`import("/ui/explorer.js").then((m) => { window.explorerModule = m; })`);
  return page.evaluate(
    async ({ view, drawings }) => {
      type Rows = unknown[][];
      interface Plot {
        show: (list: { rows: Rows; field: number }[], from: number, to: number) => void;
      }
      const w = window as unknown as {
        explorerModule: { plot: (el: HTMLElement, width: number, spec: object) => Plot };
        explorerDrawings: Record<string, HTMLCanvasElement>;
      };
      const c = JSON.parse(sessionStorage.getItem("meridian-console-credential")!) as { value: string };
      const headers = {
        "svc-open-api-key": c.value,
        "svc-service-id": "timeseries",
        "svc-project-id": view.project,
        "svc-dataset-id": view.dataset,
      };
      const q = (o: Record<string, string>) => new URLSearchParams(o).toString();
      const stamp = (s: number) => new Date(s * 1000).toISOString().slice(0, 19);
      const range = { from: stamp(view.from), to: stamp(view.to) };
      const read = (path: string) =>
        fetch(path, { headers })
          .then((r) => r.json())
          .then((j: { data: Rows }) => j.data);
      const chartEl = document.getElementById("chart")!;
      const live = chartEl.querySelector("canvas")!;
      const width = Math.floor(document.querySelector("#chart .u-over")!.getBoundingClientRect().width);
      const ids = Array.isArray(view.series) ? view.series : [view.series];
      const each = await Promise.all(
        ids.map(async (id) => {
          const base = `/api/ts/dataset/${view.dataset}/timeseries/${id}`;
          const meta = (await (await fetch(base, { headers })).json()) as { item?: { name?: string; unit?: string } };
          const every = await read(`${base}/values?${q(range)}`);
          const charted = await read(`${base}/values/chart?${q({ ...range, width: String(width) })}`);
          const rowsOf: Record<string, () => Promise<Rows>> = {
            every: () => Promise.resolve(every),
            thinned: () => Promise.resolve(charted.filter((_, i) => i % 2 === 0 || i === charted.length - 1)),
            coarse: () => read(`${base}/values/chart?${q({ ...range, width: String(Math.floor(width / 2)) })}`),
            joined: () => Promise.resolve(every.filter((r) => r[1] !== null)),
          };
          return { label: meta.item?.name ?? id, unit: meta.item?.unit ?? "", every, charted, rowsOf };
        }),
      );
      const spec = {
        series: each.map((e) => ({ label: e.label, unit: e.unit })),
        utc: document.querySelector<HTMLSelectElement>("#tz")!.value === "utc",
      };
      w.explorerDrawings = {};
      for (const name of ["every", ...drawings]) {
        const div = document.createElement("div");
        document.body.append(div);
        const list = await Promise.all(each.map(async (e) => ({ rows: await e.rowsOf[name](), field: 1 })));
        w.explorerModule.plot(div, chartEl.clientWidth, spec).show(list, view.from, view.to);
        w.explorerDrawings[name] = div.querySelector("canvas")!;
      }
      // Each series alone, on the same axes: from its rows of the many-series chart read the page made (several
      // series) or of the one-series read, and from every row of it; the two must not differ in a pixel.
      const many =
        ids.length > 1
          ? await fetch(`/api/ts/dataset/${view.dataset}/timeseries/values/chart?${q({ ...range, width: String(width) })}`, {
              method: "POST",
              headers: { ...headers, "content-type": "application/json" },
              body: JSON.stringify(ids),
            })
              .then((r) => r.json())
              .then((j: { data: Rows[] }) => j.data)
          : [each[0].charted];
      const alone: [HTMLCanvasElement, HTMLCanvasElement][] = each.map(
        (_, i) =>
          [many[i], each[i].every].map((rows) => {
            const div = document.createElement("div");
            document.body.append(div);
            const list = each.map((__, k) => ({ rows: k === i ? rows : [], field: 1 }));
            w.explorerModule.plot(div, chartEl.clientWidth, spec).show(list, view.from, view.to);
            return div.querySelector("canvas")!;
          }) as [HTMLCanvasElement, HTMLCanvasElement],
      );
      await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
      const pixels = (cv: HTMLCanvasElement) => cv.getContext("2d")!.getImageData(0, 0, cv.width, cv.height).data;
      const differing = (a: Uint8ClampedArray, b: Uint8ClampedArray) => {
        let n = 0;
        for (let i = 0; i < a.length; i += 4)
          if (a[i] !== b[i] || a[i + 1] !== b[i + 1] || a[i + 2] !== b[i + 2] || a[i + 3] !== b[i + 3]) n++;
        return n;
      };
      const mine = pixels(live);
      const reference = pixels(w.explorerDrawings.every);
      const sum = (f: (e: (typeof each)[number]) => number) => each.reduce((n, e) => n + f(e), 0);
      return {
        sizes: [live.width, live.height, w.explorerDrawings.every.width, w.explorerDrawings.every.height],
        every: sum((e) => e.every.length),
        charted: sum((e) => e.charted.length),
        missing: sum((e) => e.every.filter((r) => r[1] === null).length),
        inked: mine.reduce((n, v, i) => (i % 4 === 3 && v > 0 ? n + 1 : n), 0),
        differing: differing(mine, reference),
        vsEvery: Object.fromEntries(drawings.map((d) => [d, differing(pixels(w.explorerDrawings[d]), reference)])),
        perSeries: alone.map(([a, b]) => differing(pixels(a), pixels(b))),
        perSeriesInked: alone.map(([a]) => pixels(a).reduce((n, v, i) => (i % 4 === 3 && v > 0 ? n + 1 : n), 0)),
        summary: document.getElementById("summary")!.textContent,
      };
    },
    { view, drawings },
  );
}
