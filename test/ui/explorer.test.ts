// Issue 43, the series explorer in Chromium (/ui/explorer.html, strict CSP
// and Trusted Types with no policy): a real server, a real dataset and series
// written through the API, signed in through the page's form. The drawing is
// pixel for pixel the one of every row of the range (D50); a deep link opens
// its view and asks the chart read for the plot's width in device pixels; a
// zoom step reads the narrower range; a hostile series name stays text.
// Missing values are gaps, drawn exactly too; hovering shows the nearest row
// and its flag's name; the live summary holds the range's min, max and last
// value; the visible range downloads as CSV, Arrow and Parquet.
import { readFile } from "node:fs/promises";
import { tableFromIPC } from "apache-arrow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContextOptions, Page } from "playwright-core";
import { NO_CHROMIUM, compareDrawings, explorerPage, launchChromium, openExplorerLink as openLink } from "../helpers/browser.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { PROJECT, TS_RW, iso, tsApi } from "../helpers/timeseries.js";

const START = Date.UTC(2024, 0, 1) / 1000;
const ROWS = 40_000; // a minute apart: about 28 days, some 40 rows a pixel column
const HOSTILE = "<img src=x onerror=alert(1)>";
const HOSTILE_UNIT = "<b onmouseover=alert(2)>kPa</b>";
const HOSTILE_FIELD = "<svg onload=alert(3)>";
const HOSTILE_FLAG = "<script>alert(4)</script>";

/**
 * Rows whose every pixel column holds a spread of values (a slow wave, noise
 * and rare spikes, from a fixed seed): a drawing that left out any row of the
 * chart read, or read buckets other than its pixel columns, would show it.
 */
function noisyRows(): [string, number, number][] {
  let seed = 43;
  const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
  return Array.from({ length: ROWS }, (_, i) => {
    const spike = next() < 0.002 ? (next() - 0.5) * 40 : 0;
    return [iso(START + i * 60), Math.round((10 + 3 * Math.sin(i / 900) + (next() - 0.5) * 4 + spike) * 1000) / 1000, 0];
  });
}

const GAPPY = 20_000; // a minute apart, about 14 days: some 20 rows a pixel column
/** Row `i` of the gappy series has a missing value: a long run, a lone value between two runs, single ones. */
const missing = (i: number) => (i >= 3000 && i < 3400) || (i >= 8000 && i < 8200 && i !== 8100) || i % 97 === 13 || i === 15_000;
/** Its flag: 1 "suspect", 2 "estimated", 9 (a flag the field does not name), missing with single missing values. */
const flagOf = (i: number) => (i % 97 === 13 ? null : i % 50 === 5 ? 1 : i % 50 === 6 ? 2 : i % 500 === 107 ? 9 : 0);

/** The noisy rows with missing values and flags. */
function gappyRows(): [string, number | null, number | null][] {
  return noisyRows()
    .slice(0, GAPPY)
    .map(([t, v], i) => [t, missing(i) ? null : v, flagOf(i)]);
}

let server: TestServer;
let browser: Browser;
let key: string;
let dataset: string;
let series: string;
let hostile: string;
let gappy: string;
let inlet: string; // degC, as the noisy rows
let outlet: string; // degC too: the same axis as the inlet
let pressure: string; // kPa, its own axis: rows 90 s apart, from a day later, on another scale
beforeAll(async () => {
  if (NO_CHROMIUM) return;
  server = await startTestServer();
  key = await server.key({ ...TS_RW, clientId: "explorer" });
  const api = tsApi(server, key);
  dataset = await api.dataset();
  series = await api.series(dataset, { item: { name: "Level" } });
  await api.upload(dataset, series, noisyRows());
  hostile = await api.series(dataset, {
    item: { name: HOSTILE, unit: HOSTILE_UNIT },
    dataFields: [
      { name: "value", dataType: "Single" },
      { name: HOSTILE_FIELD, dataType: "Flag", flags: [{ id: 1, name: HOSTILE_FLAG, level: 2 }] },
    ],
  });
  await api.upload(
    dataset,
    hostile,
    noisyRows()
      .slice(0, 500)
      .map(([t, v], i) => [t, v, i % 50 === 5 ? 1 : 0]),
  );
  gappy = await api.series(dataset, {
    item: { name: "Gappy" },
    dataFields: [
      { name: "value", dataType: "Single" },
      {
        name: "quality",
        dataType: "Flag",
        flags: [
          { id: 1, name: "suspect", level: 2 },
          { id: 2, name: "estimated", level: 1 },
        ],
      },
    ],
  });
  await api.upload(dataset, gappy, gappyRows());
  const overlaid = (name: string, unit: string, depth: number) =>
    api.series(dataset, { item: { name, unit }, properties: { depth }, dataFields: [{ name: "value", dataType: "Single" }] });
  inlet = await overlaid("Inlet", "degC", 1);
  await api.upload(
    dataset,
    inlet,
    noisyRows().map(([t, v]) => [t, v]),
  );
  outlet = await overlaid("Outlet", "degC", 7);
  await api.upload(
    dataset,
    outlet,
    noisyRows().map(([t, v]) => [t, Math.round((v - 4) * 1000) / 1000]),
  );
  pressure = await overlaid("Pressure", "kPa", 12);
  await api.upload(
    dataset,
    pressure,
    noisyRows()
      .slice(0, 25_000)
      .map(([, v], i) => [iso(START + 86_400 + i * 90), Math.round((v * 40 + 900) * 100) / 100]),
  );
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const link = (from: number, to: number, id = series, extra = "") =>
  `${server.url}/ui/explorer.html#project=${PROJECT}&dataset=${dataset}&series=${id}&from=${iso(from)}Z&to=${iso(to)}Z${extra}`;

/** A signed-in explorer page recording its chart reads; `dpr` is the device pixel ratio. */
const explorer = (dpr = 1, options: BrowserContextOptions = {}) =>
  explorerPage(browser, server.url, key, { deviceScaleFactor: dpr, ...options });

/** The plot area's width in device pixels, as the page lays it out. */
const plotDevicePixels = (page: Page) =>
  page.evaluate(() => document.querySelector("#chart .u-over")!.getBoundingClientRect().width * devicePixelRatio);

const seconds = (v: string | null) => Date.parse(v!) / 1000;

describe.skipIf(NO_CHROMIUM)(`issue 43 series explorer in Chromium${NO_CHROMIUM ? ` (${NO_CHROMIUM})` : ""}`, () => {
  it("D50 the explorer draws every pixel of the chart read exactly (issue 43 item 2)", async () => {
    const w = await explorer();
    try {
      // A range cut inside the series, not on block or row edges.
      const from = START + 3 * 3600 + 17 * 60 + 30;
      const to = START + 20 * 86_400 + 301;
      await openLink(w.page, link(from, to));
      const result = await compareDrawings(w.page, { project: PROJECT, dataset, series, from, to }, ["thinned", "coarse"]);
      expect(result.sizes[0]).toBeGreaterThan(900);
      expect(result.sizes.slice(2)).toEqual(result.sizes.slice(0, 2));
      // The explorer drew the chart read of the plot's width: far fewer rows than the range holds.
      expect(result.summary).toContain(`${result.charted} rows drawn`);
      expect(result.every).toBeGreaterThan(5 * result.charted);
      expect(result.inked).toBeGreaterThan(10_000); // axes, ticks and the line
      expect(result.differing).toBe(0);
      // Resampled drawings differ from every row's: the comparison above can fail.
      expect(result.vsEvery.thinned).toBeGreaterThan(100);
      expect(result.vsEvery.coarse).toBeGreaterThan(100);
      expect(w.dialogs).toEqual([]);
      expect(await w.violations()).toEqual([]);
    } finally {
      await w.page.close();
    }
  });

  it("issue 43 a deep link opens its view, and the chart read's width is the plot's device pixels", async () => {
    const w = await explorer(2);
    try {
      const from = START + 86_400;
      const to = START + 9 * 86_400 - 1;
      await openLink(w.page, link(from, to));
      const read = w.charts.at(-1)!;
      const devicePixels = await w.page.evaluate(() => devicePixelRatio);
      expect(devicePixels).toBe(2);
      expect(Number(read.searchParams.get("width"))).toBe(await plotDevicePixels(w.page));
      expect(Number(read.searchParams.get("width"))).toBeGreaterThan(1500); // device pixels, not CSS pixels
      expect([seconds(read.searchParams.get("from")), seconds(read.searchParams.get("to"))]).toEqual([from, to]);
      expect(read.pathname).toBe(`/api/ts/dataset/${dataset}/timeseries/${series}/values/chart`);
      expect(await w.page.inputValue("#pick input[name=project]")).toBe(PROJECT);
      expect(await w.page.inputValue("#pick input[name=dataset]")).toBe(dataset);
      expect(await w.page.inputValue("#series")).toBe(series);
      // The view stays in the hash as it was asked for.
      const hash = new URLSearchParams(new URL(w.page.url()).hash.slice(1));
      expect([hash.get("series"), seconds(hash.get("from")), seconds(hash.get("to"))]).toEqual([series, from, to]);
      // The link loaded afresh (the page starting with it, as a shared link does) reads the same view.
      const n = w.charts.length;
      await w.page.reload();
      await expect.poll(() => w.page.textContent("#summary")).toMatch(/rows drawn/);
      // Every read the fresh page made is of that same view (a layout settling late under load may
      // ask twice; it must never ask for another range or width).
      const afresh = w.charts.slice(n);
      expect(afresh.length).toBeGreaterThanOrEqual(1);
      expect(afresh.map((u) => u.search)).toEqual(afresh.map(() => read.search));
      expect(await w.violations()).toEqual([]);
    } finally {
      await w.page.close();
    }
  });

  it("issue 43 a zoom step (keyboard, wheel) reads the narrower range and puts it in the hash", async () => {
    const w = await explorer();
    try {
      const from = START;
      const to = START + 16 * 86_400 - 1;
      await openLink(w.page, link(from, to));
      const before = w.charts.length;
      await w.page.focus("#chart");
      await w.page.keyboard.press("+");
      await expect.poll(() => w.charts.length).toBeGreaterThan(before);
      const zoomed = w.charts.at(-1)!;
      const span = (u: URL) => seconds(u.searchParams.get("to")) - seconds(u.searchParams.get("from")) + 1;
      // Half the range, around its middle, at the same width.
      expect(span(zoomed)).toBe((to - from + 1) / 2);
      expect(seconds(zoomed.searchParams.get("from"))).toBe(from + (to - from + 1) / 4);
      expect(zoomed.searchParams.get("width")).toBe(String(await plotDevicePixels(w.page)));
      await expect
        .poll(() => new URLSearchParams(new URL(w.page.url()).hash.slice(1)).get("from"))
        .toBe(`${zoomed.searchParams.get("from")}`);
      // The wheel zooms in around the pointer: a narrower range that still holds the time under it.
      const box = (await w.page.locator("#chart .u-over").boundingBox())!;
      const n = w.charts.length;
      await w.page.mouse.move(box.x + box.width * 0.25, box.y + box.height / 2);
      await w.page.mouse.wheel(0, -100);
      await expect.poll(() => w.charts.length).toBeGreaterThan(n);
      const wheeled = w.charts.at(-1)!;
      expect(span(wheeled)).toBeLessThan(span(zoomed));
      const pointed = seconds(zoomed.searchParams.get("from")) + span(zoomed) * 0.25;
      expect(seconds(wheeled.searchParams.get("from"))).toBeLessThan(pointed);
      expect(seconds(wheeled.searchParams.get("to"))).toBeGreaterThan(pointed);
      await expect.poll(() => w.page.textContent("#summary")).toContain(`${wheeled.searchParams.get("from")} to`);
      expect(await w.violations()).toEqual([]);
    } finally {
      await w.page.close();
    }
  });

  it("issue 43 a series name, unit, field and flag names holding HTML are shown as text: no element, no dialog", async () => {
    const w = await explorer();
    try {
      const elements = () => w.page.evaluate(() => document.querySelectorAll("img, svg, script:not([src]), b").length);
      // Overlaid with another series, so the unit labels an axis (drawn on the canvas).
      await openLink(w.page, link(START, START + 499 * 60, `${hostile},${series}`));
      const option = `${HOSTILE} [${HOSTILE_UNIT}] (${hostile}) depth=2.5`;
      expect(await w.page.locator("#series option:checked").allTextContents()).toContain(option);
      expect(await w.page.locator("#summary li").first().textContent()).toMatch(
        new RegExp(`^${HOSTILE.replace(/[()]/g, "\\$&")} value: min`),
      );
      expect(await w.page.textContent("#flags")).toContain(`${HOSTILE} ${HOSTILE_FIELD}: ${HOSTILE_FLAG} ×`);
      const box = (await w.page.locator("#chart .u-over").boundingBox())!;
      await w.page.mouse.move(box.x + (5.2 / 500) * box.width, box.y + box.height / 2);
      expect(await w.page.textContent("#hover")).toContain(`${HOSTILE}: 2024-01-01T00:05:00Z`);
      expect(await w.page.textContent("#hover")).toContain(`${HOSTILE_FIELD} ${HOSTILE_FLAG}`);
      await w.page.fill("#series-search", "onerror");
      // The chosen stay listed; of the others, only what the search finds (none here).
      const left = await w.page.locator("#series option").allTextContents();
      expect(left).toHaveLength(2);
      expect(left).toContain(option);
      expect(left.some((t) => t.startsWith(`Level (${series})`))).toBe(true);
      expect(await elements()).toBe(0);
      expect(w.dialogs).toEqual([]);
      expect(await w.violations()).toEqual([]);
    } finally {
      await w.page.close();
    }
  });

  it("D50 missing values are gaps, drawn exactly as every row draws them (issue 43 item 3)", async () => {
    const w = await explorer();
    try {
      // Cut inside the series, off row and block edges: the long run of missing values, the lone value
      // between two runs, and single missing values all lie inside.
      const from = START + 2 * 3600 + 7 * 60 + 20;
      const to = START + (GAPPY - 17) * 60 + 11;
      await openLink(w.page, link(from, to, gappy));
      const result = await compareDrawings(w.page, { project: PROJECT, dataset, series: gappy, from, to }, ["joined"]);
      // The line's pixels (#1f4e9c) in the canvas column of the row `i` minutes after the series' start, in the
      // page's drawing, every row's and the joined one's (which steps over missing values, as the first slice did).
      const ink = (i: number) =>
        w.page.evaluate(
          ({ i, from, to, start }) => {
            const d = (window as unknown as { explorerDrawings: Record<string, HTMLCanvasElement> }).explorerDrawings;
            const live = document.querySelector<HTMLCanvasElement>("#chart canvas")!;
            const over = document.querySelector("#chart .u-over")!.getBoundingClientRect();
            const left = over.left - live.getBoundingClientRect().left;
            const x = left + Math.floor(((start + i * 60 - from) * Math.floor(over.width)) / (to - from + 1));
            return [live, d.every, d.joined].map((cv) => {
              const px = cv.getContext("2d")!.getImageData(0, 0, cv.width, cv.height).data;
              let n = 0;
              for (let y = 0; y < cv.height; y++) {
                const o = (y * cv.width + x) * 4;
                // Its colour, give or take the rounding of a pixel the line covers in part (kept premultiplied).
                const near = (k: number, v: number) => Math.abs(px[o + k] - v) <= 12;
                if (px[o + 3] > 0 && near(0, 0x1f) && near(1, 0x4e) && near(2, 0x9c)) n++;
              }
              return n;
            });
          },
          { i, from, to, start: START },
        );
      const inkInRun = await ink(3200); // mid-run of missing values
      const inkOfLone = (await ink(8100))[0]; // the lone value between two runs is a dot
      expect(result.missing).toBeGreaterThan(600);
      expect(result.summary).toMatch(/rows drawn/);
      expect(result.differing).toBe(0);
      expect(result.vsEvery.joined).toBeGreaterThan(20);
      expect(inkInRun.slice(0, 2)).toEqual([0, 0]);
      expect(inkInRun[2]).toBeGreaterThan(0);
      expect(inkOfLone).toBeGreaterThan(0);
      expect(w.dialogs).toEqual([]);
      expect(await w.violations()).toEqual([]);
    } finally {
      await w.page.close();
    }
  });

  it("issue 43 hovering shows the nearest row: UTC and local time, value, flag name; no motion when reduced motion is asked", async () => {
    const w = await explorer(1, { timezoneId: "Asia/Tokyo", reducedMotion: "reduce" });
    try {
      // Twelve rows over the plot's width: each about a hundred pixels from the next.
      const from = START + 100 * 60;
      const to = START + 111 * 60;
      await openLink(w.page, link(from, to, gappy));
      const box = (await w.page.locator("#chart .u-over").boundingBox())!;
      const hoverRow = async (i: number, nudge: number) => {
        const x = box.x + ((START + i * 60 - from + 0.5) / (to + 1 - from)) * box.width + nudge;
        await w.page.mouse.move(x, box.y + box.height / 2);
        return w.page.textContent("#hover");
      };
      const rows = gappyRows();
      // Row 105: flag 1, "suspect", hovered from a few pixels to its right.
      expect(rows[105][2]).toBe(1);
      expect(await hoverRow(105, 20)).toBe(
        `2024-01-01T01:45:00Z · local 2024-01-01 10:45:00 (Asia/Tokyo, UTC+09:00) · value ${rows[105][1]} · quality suspect`,
      );
      // Row 106: "estimated", from its left; row 110 (a missing value, and no flag either).
      expect(await hoverRow(106, -20)).toContain(`· value ${rows[106][1]} · quality estimated`);
      expect([missing(110), flagOf(110)]).toEqual([true, null]);
      expect(await hoverRow(110, 5)).toBe(
        "2024-01-01T01:50:00Z · local 2024-01-01 10:50:00 (Asia/Tokyo, UTC+09:00) · value missing · quality missing",
      );
      expect(await hoverRow(107, 0)).toMatch(/quality 9 \(no name\)$/);
      // Reduced motion: nothing on the page has a transition or an animation.
      const moving = await w.page.evaluate(
        () =>
          [...document.querySelectorAll("*")].filter((e) => {
            const cs = getComputedStyle(e);
            return cs.transitionDuration.split(",").some((d) => parseFloat(d) > 0) || cs.animationName !== "none";
          }).length,
      );
      expect(moving).toBe(0);
      expect(await w.violations()).toEqual([]);
    } finally {
      await w.page.close();
    }
  });

  it("issue 43 the live summary holds the range's min, max and last value, as every row of it gives them", async () => {
    const w = await explorer();
    try {
      const from = START + 3 * 3600 + 1;
      const to = START + 15_000 * 60; // the range's last row has a missing value
      await openLink(w.page, link(from, to, gappy));
      const all = gappyRows().filter((r) => seconds(`${r[0]}Z`) >= from && seconds(`${r[0]}Z`) <= to);
      const values = all.filter((r) => r[1] !== null);
      const min = values.reduce((a, r) => (r[1]! < a[1]! ? r : a));
      const max = values.reduce((a, r) => (r[1]! > a[1]! ? r : a));
      const text = (await w.page.textContent("#summary"))!;
      const drawnRows = Number(/: (\d+) rows drawn/.exec(text)![1]);
      expect(drawnRows).toBeLessThan(all.length / 3); // the chart read's rows, not every row
      expect(text).toContain(`value: min ${min[1]} at ${min[0]}Z, max ${max[1]} at ${max[0]}Z, last missing at ${iso(to)}Z.`);
      expect(await w.page.getAttribute("#summary", "aria-live")).toBe("polite");
    } finally {
      await w.page.close();
    }
  });

  it("issue 43 the visible range downloads as Arrow (its rows), CSV and Parquet, through a Blob URL under the CSP", async () => {
    const w = await explorer();
    try {
      const from = START + 5 * 3600 + 30;
      const to = START + 2 * 86_400 + 7;
      await openLink(w.page, link(from, to, gappy));
      const rows = gappyRows().filter((r) => seconds(`${r[0]}Z`) >= from && seconds(`${r[0]}Z`) <= to);
      const save = async (format: string) => {
        const [d] = await Promise.all([w.page.waitForEvent("download"), w.page.click(`#downloads button[data-format=${format}]`)]);
        return { name: d.suggestedFilename(), url: d.url(), bytes: await readFile(await d.path()) };
      };
      const arrow = await save("arrow");
      expect(arrow.url).toMatch(/^blob:/);
      expect(arrow.name).toBe(`${gappy}_${iso(from)}Z_${iso(to)}Z.arrows`.replaceAll(":", ""));
      const table = tableFromIPC(arrow.bytes);
      expect(table.numRows).toBe(rows.length);
      expect(table.schema.fields.map((f) => f.name)).toEqual(["timestamp", "value", "quality"]);
      expect(table.getChild("value")!.nullCount).toBe(rows.filter((r) => r[1] === null).length);
      expect(await w.page.textContent("#download-status")).toBe(`Saved ${arrow.bytes.length} bytes of Arrow.`);
      const csv = (await save("csv")).bytes.toString("utf8").split("\r\n");
      expect(csv.length).toBe(rows.length + 2); // the header, the rows, and the last line's end
      expect(csv[0]).toBe("timestamp,value,quality");
      const r = rows.findIndex((x) => x[1] === null);
      expect(csv[r + 1]).toBe(`${rows[r][0]}Z,,${rows[r][2] ?? ""}`);
      expect(csv[1]).toBe(`${rows[0][0]}Z,${rows[0][1]},${rows[0][2]}`);
      const parquet = await save("parquet");
      expect(parquet.bytes.subarray(0, 4).toString()).toBe("PAR1");
      expect(parquet.name.endsWith(".parquet")).toBe(true);
      expect(w.dialogs).toEqual([]);
      expect(await w.violations()).toEqual([]);
    } finally {
      await w.page.close();
    }
  });

  it("issue 43 no credential: the sign-in is offered, nothing is read, and signing in opens the linked view", async () => {
    const w = await explorerPage(browser, server.url, null);
    try {
      const api: string[] = [];
      w.page.on("request", (r) => {
        if (r.url().includes("/api/")) api.push(r.url());
      });
      await w.page.goto(link(START, START + 86_400 - 1));
      await w.page.locator("#sign-in input[name=value]").waitFor();
      expect(await w.page.isVisible("#app")).toBe(false);
      expect(await w.page.isVisible("#sign-out")).toBe(false);
      expect(await w.page.locator("#sign-in select[name=kind] option").allTextContents()).toEqual(["API key", "Bearer token"]);
      expect(api).toEqual([]);
      await w.page.fill("#sign-in input[name=value]", key);
      await w.page.click("#sign-in button[type=submit]");
      await expect.poll(() => w.page.textContent("#summary")).toMatch(/rows drawn/);
      expect(w.charts.at(-1)!.pathname).toContain(series);
      // Stored for the tab under the console's name: the console opens signed in too.
      expect(await w.page.evaluate(() => JSON.parse(sessionStorage.getItem("meridian-console-credential")!))).toEqual({
        kind: "key",
        value: key,
      });
      expect(await w.violations()).toEqual([]);
    } finally {
      await w.page.close();
    }
  });

  it("issue 43 a refused credential: the sign-in again, with the server's 401 beside it, and no view", async () => {
    const w = await explorerPage(browser, server.url, null);
    try {
      const refused: number[] = [];
      w.page.on("response", (r) => {
        if (r.url().includes("/api/")) refused.push(r.status());
      });
      // With a linked view: the listing is refused at once.
      await w.page.goto(link(START, START + 86_400 - 1));
      await w.page.fill("#sign-in input[name=value]", "mrd_nosuchkey_0000");
      await w.page.click("#sign-in button[type=submit]");
      await expect.poll(() => w.page.textContent("#sign-in-error")).toMatch(/^This credential was refused: .+/);
      expect(refused).toEqual([401]);
      expect(await w.page.getAttribute("#sign-in-error", "role")).toBe("alert");
      expect(await w.page.isVisible("#sign-in-error")).toBe(true);
      expect(await w.page.isVisible("#app")).toBe(false);
      expect(await w.page.evaluate(() => sessionStorage.getItem("meridian-console-credential"))).toBeNull();
      expect(w.charts).toEqual([]);
      // Without one: the first listing is refused, and back to the sign-in with the reason.
      await w.page.goto(`${server.url}/ui/explorer.html`);
      await w.page.fill("#sign-in input[name=value]", "mrd_nosuchkey_0000");
      await w.page.click("#sign-in button[type=submit]");
      await w.page.fill("#pick input[name=project]", PROJECT);
      await w.page.fill("#pick input[name=dataset]", dataset);
      await w.page.click("#pick button[type=submit]");
      await expect.poll(() => w.page.textContent("#sign-in-error")).toMatch(/^This credential was refused/);
      expect(await w.page.isVisible("#app")).toBe(false);
      expect(await w.violations()).toEqual([]);
    } finally {
      await w.page.close();
    }
  });

  it("issue 43 a read-only key reads: the series listed, drawn and downloaded", async () => {
    const readOnly = await server.key({ scopes: ["platform_timeseries_read"], projects: [PROJECT], clientId: "explorer-reader" });
    const w = await explorerPage(browser, server.url, readOnly);
    try {
      await w.page.fill("#pick input[name=project]", PROJECT);
      await w.page.fill("#pick input[name=dataset]", dataset);
      await w.page.click("#pick button[type=submit]");
      await expect.poll(() => w.page.locator("#series option").count()).toBe(6);
      await w.page.selectOption("#series", series);
      await expect.poll(() => w.page.textContent("#summary")).toMatch(/rows drawn/);
      const [d] = await Promise.all([w.page.waitForEvent("download"), w.page.click("#downloads button[data-format=csv]")]);
      expect((await readFile(await d.path())).toString("utf8").split("\r\n").length).toBe(ROWS + 2);
      expect(await w.page.isVisible("#notice")).toBe(false);
      expect(await w.page.textContent("#sign-in-error")).toBe("");
    } finally {
      await w.page.close();
    }
  });

  it("issue 43 several series overlaid through the many-series chart read, a y axis per unit, every pixel exact", async () => {
    const w = await explorer();
    try {
      const bodies: string[] = [];
      w.page.on("request", (r) => {
        if (r.url().includes("/values/chart")) bodies.push(`${r.method()} ${r.postData() ?? ""}`);
      });
      const from = START + 5 * 3600 + 17;
      const to = START + 19 * 86_400 + 4001;
      const ids = [inlet, pressure, outlet];
      await openLink(w.page, link(from, to, ids.join(",")));
      const read = w.charts.at(-1)!;
      expect(read.pathname).toBe(`/api/ts/dataset/${dataset}/timeseries/values/chart`);
      expect(bodies.at(-1)).toBe(`POST ${JSON.stringify(ids)}`);
      expect(Number(read.searchParams.get("width"))).toBe(await plotDevicePixels(w.page));
      expect([seconds(read.searchParams.get("from")), seconds(read.searchParams.get("to"))]).toEqual([from, to]);
      expect(new URLSearchParams(new URL(w.page.url()).hash.slice(1)).get("series")).toBe(ids.join(","));
      const selected = await w.page.locator("#series").evaluate((e: HTMLSelectElement) => [...e.selectedOptions].map((o) => o.value));
      expect(selected.sort()).toEqual([...ids].sort());
      const result = await compareDrawings(w.page, { project: PROJECT, dataset, series: ids, from, to }, ["thinned"]);
      expect(result.differing).toBe(0);
      // And each series alone, on its own axis, from its rows of the many-series read: exact too.
      expect(result.perSeries).toEqual([0, 0, 0]);
      expect(Math.min(...result.perSeriesInked)).toBeGreaterThan(5000);
      expect(result.vsEvery.thinned).toBeGreaterThan(100);
      expect(result.every).toBeGreaterThan(5 * result.charted);
      // Two units, two y axes (degC left, kPa right, each labelled), and the time axis.
      const axes = await w.page.evaluate(() => {
        const u = document.querySelectorAll("#chart .u-axis");
        return u.length;
      });
      expect(axes).toBe(3);
      // The summary: a line per series, in the order drawn.
      const lines = await w.page.locator("#summary li").allTextContents();
      expect(lines.map((l) => l.split(":")[0])).toEqual(["Inlet value", "Pressure value", "Outlet value"]);
      // Hovering: each series' nearest row, named.
      const box = (await w.page.locator("#chart .u-over").boundingBox())!;
      await w.page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
      const hover = (await w.page.textContent("#hover"))!.split("\n");
      expect(hover.map((l) => l.split(":")[0])).toEqual(["Inlet", "Pressure", "Outlet"]);
      expect(await w.violations()).toEqual([]);
    } finally {
      await w.page.close();
    }
  });

  it("issue 43 several series' whole range is the range they span together, each drawn over it exactly", async () => {
    const w = await explorer();
    try {
      await w.page.goto(`${server.url}/ui/explorer.html#project=${PROJECT}&dataset=${dataset}&series=${pressure},${inlet}`);
      await expect.poll(() => w.page.textContent("#summary")).toMatch(/rows drawn/);
      const read = w.charts.at(-1)!;
      // The inlet starts first and ends last: the pressure lies within.
      const from = START;
      const to = START + (ROWS - 1) * 60;
      expect([seconds(read.searchParams.get("from")), seconds(read.searchParams.get("to"))]).toEqual([from, to]);
      const result = await compareDrawings(w.page, { project: PROJECT, dataset, series: [pressure, inlet], from, to }, []);
      expect(result.differing).toBe(0);
    } finally {
      await w.page.close();
    }
  });

  it("issue 43 flags are drawn as bands and markers in a lane of their own, with their names", async () => {
    const w = await explorer();
    try {
      // Twelve rows a hundred pixels apart: 105 suspect, 106 estimated, 107 a flag without a name.
      const from = START + 100 * 60;
      const to = START + 111 * 60;
      await openLink(w.page, link(from, to, gappy));
      expect(await w.page.textContent("#flags")).toBe("Flags drawn: Gappy quality: suspect ×1, estimated ×1, 9 (no name) ×1.");
      const lane = await w.page.evaluate(
        ({ from, to, start }) => {
          const cv = document.querySelector<HTMLCanvasElement>("#chart .flag-lane")!;
          const px = cv.getContext("2d")!.getImageData(0, 0, cv.width, cv.height).data;
          const column = (i: number) => Math.floor(((start + i * 60 - from) * cv.width) / (to + 1 - from));
          const inked = (x: number) => {
            let n = 0;
            for (let y = 0; y < cv.height; y++) if (px[(y * cv.width + x) * 4 + 3] > 0) n++;
            return n;
          };
          return { rows: [104, 105, 106, 107, 108].map((i) => inked(column(i))), height: cv.height, line: inked(column(105) + 30) };
        },
        { from, to, start: START },
      );
      // A marker at each flagged row's column, none at the unflagged ones; the name written beside it.
      expect(lane.rows[0]).toBe(0);
      expect(lane.rows.slice(1, 4).every((n) => n === lane.height)).toBe(true);
      expect(lane.rows[4]).toBe(0);
      expect(lane.line).toBeGreaterThan(0);
      // Zoomed out, runs of one flag over many rows are bands: the whole series.
      await openLink(w.page, link(START, START + (GAPPY - 1) * 60, gappy));
      expect(await w.page.textContent("#flags")).toMatch(
        /^Flags drawn: Gappy quality: suspect ×\d+, estimated ×\d+, 9 \(no name\) ×\d+\.$/,
      );
      // The line's own canvas holds no flag: the exact drawing is untouched by them.
      const result = await compareDrawings(
        w.page,
        { project: PROJECT, dataset, series: gappy, from: START, to: START + (GAPPY - 1) * 60 },
        [],
      );
      expect(result.differing).toBe(0);
      expect(await w.violations()).toEqual([]);
    } finally {
      await w.page.close();
    }
  });

  /** The time axis as the page drew it: its ticks and their labels. */
  const ticks = async (page: Page) => {
    await page.evaluate(`import("/ui/explorer.js").then((m) => { window.explorerModule = m; })`);
    return page.evaluate(() =>
      (window as unknown as { explorerModule: { timeTicks: () => { splits: number[]; labels: string[] } } }).explorerModule.timeTicks(),
    );
  };
  /** The hour of a tick's label (uPlot's "2am", "12pm", with the date on a second line at a day's start), 0..23. */
  const labelHour = (label: string) => {
    const m = /^(\d+)(am|pm)/.exec(label)!;
    return (Number(m[1]) % 12) + (m[2] === "pm" ? 12 : 0);
  };

  it("issue 43 the time axis: evenly spaced ticks on whole hours or days, in the browser's time zone or UTC as chosen", async () => {
    const w = await explorer(1, { timezoneId: "Asia/Tokyo" });
    try {
      // One day, in the browser's zone (Tokyo, UTC+9): ticks on Tokyo's whole hours, labelled in its hours.
      await openLink(w.page, link(START, START + 86_399));
      expect(await w.page.inputValue("#tz")).toBe("local");
      expect(await w.page.textContent("#summary")).toContain("times on the axis in Asia/Tokyo");
      const local = await ticks(w.page);
      const steps = new Set(local.splits.slice(1).map((t, i) => t - local.splits[i]));
      expect(steps.size).toBe(1); // evenly spaced
      const step = [...steps][0];
      expect([3600, 7200, 10_800, 14_400, 21_600]).toContain(step);
      expect(local.splits.length).toBeGreaterThanOrEqual(4);
      for (const [i, t] of local.splits.entries()) expect(labelHour(local.labels[i])).toBe((new Date(t * 1000).getUTCHours() + 9) % 24);
      // Tokyo's midnight (15:00 UTC) starts a day: its label carries the date.
      const midnight = local.splits.indexOf(START + 15 * 3600);
      expect(local.labels[midnight]).toMatch(/^12am\n/);
      // UTC: the same view, its ticks on UTC's hours; the choice is in the link.
      await w.page.selectOption("#tz", "utc");
      await expect.poll(() => w.page.textContent("#summary")).toContain("times on the axis in UTC");
      const utc = await ticks(w.page);
      for (const [i, t] of utc.splits.entries()) expect(labelHour(utc.labels[i])).toBe(new Date(t * 1000).getUTCHours());
      expect(utc.labels).not.toEqual(local.labels);
      expect(new URLSearchParams(new URL(w.page.url()).hash.slice(1)).get("tz")).toBe("utc");
      // The whole series (about 28 days): ticks on whole days.
      await openLink(w.page, link(START, START + (ROWS - 1) * 60, series, "&tz=utc"));
      const days = await ticks(w.page);
      expect(days.splits.filter((t) => t % 86_400 !== 0)).toEqual([]);
      expect(days.labels.length).toBe(days.splits.length);
      expect(days.splits.length).toBeGreaterThanOrEqual(4);
      // The drawing is still exact in UTC.
      const result = await compareDrawings(w.page, { project: PROJECT, dataset, series, from: START, to: START + (ROWS - 1) * 60 }, []);
      expect(result.differing).toBe(0);
      expect(await w.violations()).toEqual([]);
    } finally {
      await w.page.close();
    }
  });

  const span = (u: URL) => seconds(u.searchParams.get("to")) - seconds(u.searchParams.get("from")) + 1;

  it("issue 43 pinch (two touch pointers) zooms around their middle; double click zooms in, Shift double click out; Home shows it all", async () => {
    const w = await explorer(1, { hasTouch: true });
    try {
      const from = START;
      const to = START + 16 * 86_400 - 1;
      await openLink(w.page, link(from, to));
      const box = (await w.page.locator("#chart .u-over").boundingBox())!;
      const y = box.y + box.height / 2;
      const mid = box.x + box.width * 0.5;
      // Two fingers 100 px apart spread to 400 px: a quarter of the span, around their middle.
      const cdp = await w.page.context().newCDPSession(w.page);
      const touch = (type: "touchStart" | "touchMove" | "touchEnd", d: number) =>
        cdp.send("Input.dispatchTouchEvent", {
          type,
          touchPoints:
            type === "touchEnd"
              ? []
              : [
                  { x: mid - d / 2, y, id: 1 },
                  { x: mid + d / 2, y, id: 2 },
                ],
        });
      let n = w.charts.length;
      await touch("touchStart", 100);
      for (const d of [150, 200, 300, 400]) await touch("touchMove", d);
      await touch("touchEnd", 0);
      await expect.poll(() => w.charts.length).toBeGreaterThan(n);
      await expect.poll(() => span(w.charts.at(-1)!)).toBe((to - from + 1) / 4);
      const pinched = w.charts.at(-1)!;
      const middle = from + (to - from + 1) / 2;
      expect(seconds(pinched.searchParams.get("from")) + span(pinched) / 2).toBe(middle);
      // Double click at a quarter of the width: half the span, the time under the pointer kept.
      n = w.charts.length;
      await w.page.mouse.dblclick(box.x + box.width * 0.25, y);
      await expect.poll(() => w.charts.length).toBeGreaterThan(n);
      const clicked = w.charts.at(-1)!;
      expect(span(clicked)).toBe(span(pinched) / 2);
      const pointed = seconds(pinched.searchParams.get("from")) + span(pinched) * 0.25;
      expect(Math.abs(seconds(clicked.searchParams.get("from")) + span(clicked) * 0.25 - pointed)).toBeLessThan(span(pinched) / 500);
      // With Shift, out again.
      n = w.charts.length;
      await w.page.keyboard.down("Shift");
      await w.page.mouse.dblclick(box.x + box.width * 0.25, y);
      await w.page.keyboard.up("Shift");
      await expect.poll(() => w.charts.length).toBeGreaterThan(n);
      expect(span(w.charts.at(-1)!)).toBe(span(pinched));
      // Keyboard: arrows pan a tenth, Home the whole series.
      await w.page.focus("#chart");
      n = w.charts.length;
      const before = w.charts.at(-1)!;
      await w.page.keyboard.press("ArrowRight");
      await expect.poll(() => w.charts.length).toBeGreaterThan(n);
      expect(seconds(w.charts.at(-1)!.searchParams.get("from")) - seconds(before.searchParams.get("from"))).toBe(span(before) / 10);
      await w.page.keyboard.press("Home");
      await expect
        .poll(() => w.page.textContent("#summary p"))
        .toMatch(new RegExp(`^${iso(START)}Z to ${iso(START + (ROWS - 1) * 60)}Z: `));
      expect(await w.violations()).toEqual([]);
    } finally {
      await w.page.close();
    }
  });

  it("issue 43 follow mode keeps the newest rows in view as they are written (polled), and a pan ends it", async () => {
    const api = tsApi(server, key);
    const live = await api.series(dataset, { item: { name: "Live" }, dataFields: [{ name: "value", dataType: "Single" }] });
    await api.upload(
      dataset,
      live,
      noisyRows()
        .slice(0, 5000)
        .map(([t, v]) => [t, v]),
    );
    const w = await explorer();
    try {
      // A day that ends before the series does: following moves it to end at the newest row.
      const from = START + 3600;
      const to = from + 86_400 / 4 - 1;
      await openLink(w.page, link(from, to, live));
      await w.page.check("#follow");
      const last = START + 4999 * 60;
      await expect.poll(() => seconds(w.charts.at(-1)!.searchParams.get("to"))).toBe(last);
      expect(span(w.charts.at(-1)!)).toBe(to - from + 1);
      // Rows written now come into view within a poll or two.
      await api.upload(
        dataset,
        live,
        Array.from({ length: 10 }, (_, i) => [iso(START + (5000 + i) * 60), 99 + i]),
      );
      const newest = START + 5009 * 60;
      await expect.poll(() => seconds(w.charts.at(-1)!.searchParams.get("to")), { timeout: 10_000 }).toBe(newest);
      await expect.poll(() => w.page.textContent("#summary")).toContain(`last 108 at ${iso(newest)}Z`);
      expect(span(w.charts.at(-1)!)).toBe(to - from + 1);
      // A pan ends following: newer rows no longer move the view.
      await w.page.focus("#chart");
      await w.page.keyboard.press("ArrowLeft");
      await expect.poll(() => w.page.isChecked("#follow")).toBe(false);
      const n = w.charts.length;
      await api.upload(dataset, live, [[iso(START + 5010 * 60), 1]]);
      await new Promise((r) => setTimeout(r, 2500));
      expect(w.charts.slice(n).every((u) => seconds(u.searchParams.get("to")) < newest)).toBe(true);
      expect(await w.violations()).toEqual([]);
    } finally {
      await w.page.close();
    }
  });

  it("issue 43 a series is picked by searching its name, unit and properties (depth>5)", async () => {
    const w = await explorer();
    try {
      await w.page.fill("#pick input[name=project]", PROJECT);
      await w.page.fill("#pick input[name=dataset]", dataset);
      await w.page.click("#pick button[type=submit]");
      await expect.poll(() => w.page.locator("#series option").count()).toBeGreaterThan(5);
      const names = async (text: string) => {
        await w.page.fill("#series-search", text);
        return (await w.page.locator("#series option").allTextContents()).map((t) => t.split(" ")[0]).sort();
      };
      expect(await names("degc")).toEqual(["Inlet", "Outlet"]);
      expect(await names("depth>5")).toEqual(["Outlet", "Pressure"]);
      // The hostile series is in kPa (within its markup) at depth 2.5.
      expect(await names("depth<=2.5 kPa")).toEqual(["<img"]);
      expect(await names("depth=1")).toEqual(["Inlet"]);
      expect(await names("depth>5 kpa")).toEqual(["Pressure"]);
      expect(await names("ressu")).toEqual(["Pressure"]);
      expect(await names("nosuch>1")).toEqual([]);
      expect(await w.page.textContent("#search-count")).toMatch(/^0 of \d+ series$/);
      // Picked from the search: drawn at once.
      await names("outlet");
      await w.page.selectOption("#series", outlet);
      await expect.poll(() => w.page.textContent("#summary")).toMatch(/rows drawn/);
      expect(w.charts.at(-1)!.pathname).toContain(outlet);
    } finally {
      await w.page.close();
    }
  });

  it("issue 43 accessible: every control reachable by Tab, the chart driven by keys, a text summary per series", async () => {
    const w = await explorer();
    try {
      await openLink(w.page, link(START + 86_400, START + 5 * 86_400 - 1, `${inlet},${pressure}`));
      // Tab from the top of the page: each control in turn, the chart among them.
      await w.page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
      const reached: string[] = [];
      for (let i = 0; i < 20; i++) {
        await w.page.keyboard.press("Tab");
        reached.push(
          await w.page.evaluate(() => {
            const e = document.activeElement!;
            return (
              e.id ||
              `${e.tagName.toLowerCase()}${e.getAttribute("name") ? `[${e.getAttribute("name")}]` : ""}${(e as HTMLElement).dataset.format ?? ""}`
            );
          }),
        );
      }
      for (const id of [
        "input[project]",
        "input[dataset]",
        "series-search",
        "series",
        "whole",
        "tz",
        "follow",
        "chart",
        "buttoncsv",
        "buttonarrow",
        "buttonparquet",
      ])
        expect(reached).toContain(id);
      expect(reached.indexOf("series")).toBeLessThan(reached.indexOf("chart"));
      // The chart says what it is and where its summary is; the summary is live.
      expect(await w.page.getAttribute("#chart", "role")).toBe("img");
      expect(await w.page.getAttribute("#chart", "aria-describedby")).toBe("summary");
      expect(await w.page.getAttribute("#summary", "aria-live")).toBe("polite");
      // Per series: its range's min, max and last value.
      const lines = await w.page.locator("#summary li").allTextContents();
      expect(lines).toHaveLength(2);
      for (const [i, name] of ["Inlet value", "Pressure value"].entries())
        expect(lines[i]).toMatch(new RegExp(`^${name}: min -?[\\d.]+ at \\S+Z, max -?[\\d.]+ at \\S+Z, last -?[\\d.]+ at \\S+Z\\.$`));
      // Keys alone change the view, and the summary says so.
      await w.page.focus("#chart");
      await w.page.keyboard.press("-");
      await expect.poll(() => w.page.textContent("#summary p")).toMatch(/^2023-12-31T00:00:00Z to /);
      expect(await w.violations()).toEqual([]);
    } finally {
      await w.page.close();
    }
  });
});
