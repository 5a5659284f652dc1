#!/usr/bin/env node
// The picture for the README (issue 18 item 4): W1 (BENCH_ROWS, default
// 1,000,000 rows) drawn at WIDTH pixel columns twice, once from every row of
// the whole-range read and once from the rows of the chart read (M4, D50),
// by the same line-drawing code in Chromium; the two images are compared
// pixel by pixel, and written side by side, with the difference, to
// bench/.work/chart-m4-vs-all.png (not committed). Needs Chromium
// (/usr/bin/chromium or MERIDIAN_TEST_CHROMIUM).
// Usage: node bench/chart/plot.js
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { onNode26 } from "../../bin/node-26.js";

// The project (its native addon) and playwright load only on Node 26 (bin/node-26.js).
if (!onNode26()) await new Promise(() => {}); // the script runs on the project's Node 26 instead, or has said why not
const { chromium } = await import("playwright-core");
const { PROJECT, seedW1 } = await import("../seed-w1.js");
const { startMeridian } = await import("../server.js");

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const WIDTH = 1000;
const HEIGHT = 300;
const out = join(dirname(fileURLToPath(import.meta.url)), "..", ".work", "chart-m4-vs-all.png");
const executablePath = [process.env.MERIDIAN_TEST_CHROMIUM, "/usr/bin/chromium", "/usr/bin/chromium-browser"].find(Boolean);

const dir = mkdtempSync(join(tmpdir(), "meridian-plot-"));
const { datasetId, series, key } = seedW1(join(dir, "m.db"), [ROWS]);
const server = await startMeridian(join(dir, "m.db"));
const headers = { "svc-open-api-key": key, "svc-service-id": "timeseries", "svc-project-id": PROJECT, "svc-dataset-id": datasetId };
const path = `${server.address}/api/ts/dataset/${datasetId}/timeseries/${series.get(ROWS)}/values`;
const browser = await chromium.launch({ executablePath, args: ["--no-sandbox"], headless: true });
try {
  const all = (await (await fetch(path, { headers })).json()).data;
  const chart = (await (await fetch(`${path}/chart?width=${WIDTH}`, { headers })).json()).data;
  const page = await browser.newPage({ viewport: { width: WIDTH, height: HEIGHT * 3 + 60 } });
  const result = await page.evaluate(
    ({ all, chart, width, height }) => {
      const seconds = (row) => Date.parse(row[0] + "Z") / 1000;
      const from = seconds(all[0]);
      const span = seconds(all[all.length - 1]) - from + 1;
      const values = all.map((r) => r[1]).filter((v) => v !== null);
      const hi = values.reduce((a, v) => Math.max(a, v), -Infinity);
      const low = values.reduce((a, v) => Math.min(a, v), Infinity);
      // One drawing for both: x is the row's pixel column (its D50 bucket), y its value, and each
      // pair of rows a line of whole pixels (Bresenham, no antialiasing: M4's claim is for such lines).
      const draw = (rows, label) => {
        const c = document.createElement("canvas");
        c.width = width;
        c.height = height;
        const g = c.getContext("2d");
        const img = g.createImageData(width, height);
        img.data.fill(255);
        const plot = (x, y) => img.data.set([31, 78, 156, 255], (y * width + x) * 4);
        let px, py;
        for (const r of rows) {
          if (r[1] === null) continue;
          const x = Math.floor(((seconds(r) - from) * width) / span);
          const y = Math.round(((hi - r[1]) / (hi - low)) * (height - 30)) + 25;
          if (px === undefined) plot(x, y);
          else {
            let [x0, y0] = [px, py];
            const dx = Math.abs(x - x0),
              dy = -Math.abs(y - y0),
              sx = x0 < x ? 1 : -1,
              sy = y0 < y ? 1 : -1;
            for (let err = dx + dy; ;) {
              plot(x0, y0);
              if (x0 === x && y0 === y) break;
              const e2 = 2 * err;
              if (e2 >= dy) {
                err += dy;
                x0 += sx;
              }
              if (e2 <= dx) {
                err += dx;
                y0 += sy;
              }
            }
          }
          [px, py] = [x, y];
        }
        g.putImageData(img, 0, 0);
        g.fillStyle = "#000";
        g.font = "13px sans-serif";
        g.fillText(label, 8, 16);
        document.body.append(c);
        return img.data;
      };
      document.body.style.margin = "0";
      const a = draw(all, `all ${all.length.toLocaleString("en")} rows`);
      const b = draw(chart, `chart read, width ${width}: ${chart.length.toLocaleString("en")} rows (M4)`);
      // The difference, in red where any channel differs.
      const c = document.createElement("canvas");
      c.width = width;
      c.height = height;
      const g = c.getContext("2d");
      const diff = g.createImageData(width, height);
      let differing = 0;
      for (let i = 0; i < a.length; i += 4) {
        const same = a[i] === b[i] && a[i + 1] === b[i + 1] && a[i + 2] === b[i + 2];
        if (!same) differing++;
        diff.data.set(same ? [255, 255, 255, 255] : [220, 30, 30, 255], i);
      }
      g.fillStyle = "#fff";
      g.fillRect(0, 0, width, height);
      g.putImageData(diff, 0, 0);
      g.fillStyle = "#000";
      g.font = "13px sans-serif";
      g.fillText(`pixels that differ: ${differing}`, 8, 16);
      document.body.append(c);
      return { differing };
    },
    { all, chart, width: WIDTH, height: HEIGHT },
  );
  mkdirSync(dirname(out), { recursive: true });
  await page.screenshot({ path: out, fullPage: true });
  process.stdout.write(
    `${ROWS.toLocaleString("en")} rows, chart read ${chart.length.toLocaleString("en")} rows at width ${WIDTH}: ${result.differing} of ${WIDTH * HEIGHT} pixels differ; ${out}\n`,
  );
} finally {
  await browser.close();
  server.process.kill();
  rmSync(dir, { recursive: true, force: true });
}
