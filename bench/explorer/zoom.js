#!/usr/bin/env node
// The explorer's figures (issue 43 item 6): in Chromium, /ui/explorer.html
// over the 1B-row W1 series of bench/chart/scale.js, then over three W1
// series of 100M rows each overlaid (bench/explorer/seed.js seeds both, or
// uses them as seeded before). From the whole range, zoom-in steps by the
// keyboard ("+" halves the span around the middle) down to the first span
// under a day (1B minutes: 20 steps, to 0.66 days; 100M: 17, to 0.53 days)
// and as many back ("-"), a pass cold (the server's block cache empty) and a
// pass warm. Each step: time from the key
// event (its timeStamp) to the animation frame after the explorer drew the
// new chart read (its summary changed), in the page; the page's JS heap after
// each step (CDP Runtime.getHeapUsage, no forced GC) and after a forced GC at
// the start and end of each pass; the server's own time of each chart read
// (its request log). The machine's load average before and after is printed:
// the machine is shared. Targets: median <= 50 ms, p95 <= 100 ms, heap flat.
// Usage: node bench/explorer/zoom.js   (BENCH_EXPLORER_CASES=1B or 3x100M for one of them)
import { onNode26 } from "../../bin/node-26.js";

/* global window, document, requestAnimationFrame -- in page.evaluate's functions, which run in the page */
if (!onNode26()) await new Promise(() => {}); // runs on the project's Node 26 instead (bin/node-26.js)
const { readFileSync } = await import("node:fs");
const { chromium } = await import("playwright-core");
const { PROJECT } = await import("../seed-w1.js");
const { START, STEP, isoTime } = await import("../w1.js");
const { serverTimes, startMeridian } = await import("../server.js");
const { reporter, spread } = await import("../report.js");
const { ONE_B, OVERLAID, THREE, seedOneB, seedThree } = await import("./seed.js");

const VIEWPORT = { width: 1600, height: 900 };
const emit = reporter("explorer-zoom");
const executablePath = [process.env.MERIDIAN_TEST_CHROMIUM, "/usr/bin/chromium", "/usr/bin/chromium-browser"].find(Boolean);
const load = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
const cases = (process.env.BENCH_EXPLORER_CASES ?? "1B,3x100M").split(",");

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

/** One case: the explorer over `ids` of `datasetId` in the database `dbPath`, `rows` per series. */
async function measure(label, dbPath, datasetId, ids, key, rows) {
  const server = await startMeridian(dbPath);
  const serverMs = serverTimes(server, "/values/chart");
  const browser = await chromium.launch({ executablePath, args: ["--no-sandbox"], headless: true });
  try {
    const page = await browser.newPage({ viewport: VIEWPORT, deviceScaleFactor: 1 });
    const cdp = await page.context().newCDPSession(page);
    await page.goto(`${server.address}/ui/explorer.html`);
    await page.fill("#sign-in input[name=value]", key);
    await page.click("#sign-in button[type=submit]");
    const from = START;
    const to = START + (rows - 1) * STEP;
    const steps = Math.ceil(Math.log2((to - from + 1) / 86_400));
    await page.goto(
      `${server.address}/ui/explorer.html#project=${PROJECT}&dataset=${datasetId}&series=${ids.join(",")}&from=${isoTime(from)}Z&to=${isoTime(to)}Z`,
    );
    await page.waitForFunction(() => document.getElementById("summary").textContent.includes("rows drawn"));
    // Each key's time to its drawn frame: the key event's timeStamp, then the frame after the summary changed.
    await page.evaluate(() => {
      window.stepTimes = [];
      let input = null;
      document.addEventListener("keydown", (e) => (input = e.timeStamp), true);
      new MutationObserver(() => {
        if (input === null) return;
        const at = input;
        input = null;
        requestAnimationFrame((frame) =>
          window.stepTimes.push({ ms: frame - at, summary: document.getElementById("summary").textContent }),
        );
      }).observe(document.getElementById("summary"), { childList: true, subtree: true, characterData: true });
    });
    await page.focus("#chart");
    const heapNow = async () => (await cdp.send("Runtime.getHeapUsage")).usedSize / 2 ** 20;
    const heapAfterGc = async () => {
      await cdp.send("HeapProfiler.collectGarbage");
      return heapNow();
    };
    const passes = {};
    for (const pass of ["cold", "warm"]) {
      const gcStart = await heapAfterGc();
      const times = [];
      const heaps = [];
      const spans = [];
      serverMs.length = 0;
      for (const key of [...Array(steps).fill("+"), ...Array(steps).fill("-")]) {
        const n = await page.evaluate(() => window.stepTimes.length);
        await page.keyboard.press(key);
        await page.waitForFunction((n) => window.stepTimes.length > n, n, { timeout: 60_000 });
        const { ms, summary } = await page.evaluate(() => window.stepTimes.at(-1));
        times.push(ms);
        heaps.push(await heapNow());
        const m = /^(\S+) to (\S+):/.exec(summary);
        spans.push((Date.parse(m[2]) - Date.parse(m[1])) / 1000 + 1);
      }
      const gcEnd = await heapAfterGc();
      passes[pass] = { times, heaps, spans, gcStart, gcEnd, server: [...serverMs] };
      const c = `${label}, ${pass} pass: ${steps} zoom steps in and ${steps} out, ${VIEWPORT.width} px`;
      emit(c, "input to drawn frame, median", spread(times), "ms");
      emit(c, "input to drawn frame, p95", quantile(times, 0.95), "ms");
      emit(c, "server time per chart read, median", spread(serverMs), "ms");
      emit(c, "JS heap after each step (min..max)", spread(heaps), "MiB");
      emit(c, "JS heap after GC, end of pass", gcEnd, "MiB", gcStart);
      emit(c, "narrowest span", Math.min(...spans) / 86_400, "days");
    }
    return passes;
  } finally {
    await browser.close();
    server.process.kill();
  }
}

process.stderr.write(`load average before: ${load()}\n`);
const all = {};
if (cases.includes("1B")) {
  const { datasetId, series, key } = seedOneB();
  all["1B"] = await measure("1B-row W1 series", ONE_B, datasetId, [series.get(1_000_000_000)], key, 1_000_000_000);
  process.stderr.write(`load average after 1B: ${load()}\n`);
}
if (cases.includes("3x100M")) {
  const { datasetId, ids, key } = seedThree();
  all["3x100M"] = await measure(`three ${OVERLAID / 1e6}M-row W1 series overlaid`, THREE, datasetId, ids, key, OVERLAID);
  process.stderr.write(`load average after 3x100M: ${load()}\n`);
}
if (process.env.BENCH_EXPLORER_DETAIL) process.stderr.write(`${JSON.stringify(all)}\n`);
