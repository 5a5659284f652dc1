// The series explorer (issue 43): pick a dataset's series and see it drawn by
// uPlot (/ui/uplot/, served by Meridian) from the exact chart read (D50, D65).
// Every pixel exact: each view asks the chart read for exactly the plot's
// width in device pixels and the visible range, and draws the rows it gets,
// none left out, none made up; a pixel column is a chart bucket. Wheel zooms
// around the pointer, drag pans, double click and Home show the whole range,
// arrows pan and +/- zoom; each change reads its range, aborting a read the
// user has moved past, and the last drawing stays until the new one comes.
// The view is in the URL's hash, so a link opens it. Missing values are gaps;
// hovering shows the nearest drawn row (UTC and local time, value, flag name);
// a live text summary gives the range's min, max and last value; the visible
// range downloads as CSV, Arrow or Parquet. Signed in as the console is (the
// same sessionStorage entry and form). User data is set as text only.
/* global uPlot */
import { authHeaders, credential, refusal as refusalOf, showSignIn, signInForm } from "/ui/credential.js";

const $ = (id) => document.getElementById(id);
const HEIGHT = 360;

/** The D14 headers of a time series call in `project` and `dataset`. */
const tsHeaders = (project, dataset) => ({
  ...authHeaders(),
  "svc-service-id": "timeseries",
  "svc-project-id": project,
  ...(dataset ? { "svc-dataset-id": dataset } : {}),
});

/** Epoch seconds of an API timestamp (one without a zone is UTC, D24). */
export const seconds = (iso) => Date.parse(/(Z|[+-]\d\d:?\d\d)$/.test(iso) ? iso : `${iso}Z`) / 1000;
/** A second as the API and the hash take it: 2024-01-01T00:00:00Z. */
const isoSecond = (s) => `${new Date(s * 1000).toISOString().slice(0, 19)}Z`;

/** uPlot's columns from a read's rows: the time in seconds and the cells of column `field` (null: missing). */
export function columns(rows, field) {
  const xs = new Array(rows.length);
  const ys = new Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    xs[i] = seconds(rows[i][0]);
    ys[i] = rows[i][field] ?? null;
  }
  return [xs, ys];
}

/**
 * uPlot's path for a series, by pixel column: a row's column is its chart
 * bucket, floor((t - from) * width / (to - from + 1)) over the plot's device
 * pixels (D50), not uPlot's rounding of its position, which could put a
 * bucket's rows in two columns. In each column the line goes to the first
 * row, its lowest and highest pixel and its last row: the line through every
 * row of the column covers exactly that, so the chart read's rows and every
 * row draw the same path whatever their number (uPlot thins only dense data,
 * and by a rule of its own).
 *
 * Missing values (null: missing or NaN, D25) are gaps, drawn from what the
 * chart read keeps of a column: its first and last rows, missing or not, and
 * its lowest and highest values (D50 skips missing values for those). The
 * line from one column to the next column that has rows is drawn only when
 * the first column's last row and the next one's first row both have values;
 * a column whose rows are all missing draws nothing and breaks the line; a
 * column still draws its lowest to highest value when its first or last row
 * is missing. A missing value inside a column that has values does not show:
 * the chart read does not keep it, and at one pixel column the column's
 * extent is drawn anyway. So every row and the chart read's rows break the
 * line at the same places. A lone value between gaps is a zero-length line,
 * which the square line cap (plot below) draws as a dot.
 */
export function columnPaths(u, si, i0, i1) {
  const xs = u.data[0];
  const ys = u.data[si];
  const from = u.scales.x.min;
  const span = u.scales.x.max - from;
  const width = Math.floor(u.bbox.width);
  const stroke = new Path2D();
  let col = -1; // the column being gathered, -1 before the first
  let firstY = null; // its first row's pixel, null when that row is missing
  let lo = null; // its lowest and highest pixels of a value, null when all its rows are missing
  let hi = null;
  let lastY = null; // its last row's pixel, null when missing
  let joinable = false; // the last column with rows ended on a value: the line may go on from it
  const flush = () => {
    if (col < 0) return;
    const x = u.bbox.left + col;
    if (lo !== null) {
      if (joinable && firstY !== null) stroke.lineTo(x, firstY);
      else stroke.moveTo(x, firstY ?? lo);
      stroke.lineTo(x, lo);
      stroke.lineTo(x, hi);
      if (lastY !== null) stroke.lineTo(x, lastY);
    }
    joinable = lastY !== null;
  };
  for (let i = i0; i <= i1; i++) {
    const v = ys[i];
    const y = v === null || v === undefined ? null : Math.round(u.valToPos(v, "y", true));
    const k = Math.floor(((xs[i] - from) * width) / span);
    if (k !== col) {
      flush();
      col = k;
      firstY = lo = hi = y;
    } else if (y !== null) {
      lo = lo === null ? y : Math.min(lo, y);
      hi = hi === null ? y : Math.max(hi, y);
    }
    lastY = y;
  }
  flush();
  return { stroke, fill: null, clip: null, band: null, gaps: null, flags: 0 };
}

/**
 * A chart in `target`, `width` CSS pixels wide; `show(rows, field, from, to)`
 * draws column `field` of `rows` over [from, to]. The explorer and its test's
 * reference drawing (every row of the range) both draw through this.
 */
export function plot(target, width, label = "") {
  const u = new uPlot(
    {
      width,
      height: HEIGHT,
      legend: { show: false },
      // Our own pan and zoom below; uPlot's drag-to-zoom would fight them.
      cursor: { drag: { x: false, y: false, setScale: false }, points: { show: false } },
      // The plot's width is the chart read's: nothing may change it but the page's layout. uPlot hides an
      // axis whose scale has no range and pads by its tick labels, so both scales always have a range
      // (an empty chart: [0, 1]), and the axes and padding have fixed sizes.
      scales: {
        x: { time: true, auto: false, min: 0, max: 1, range: (_u, min, max) => [min, max] },
        y: { range: (_u, min, max) => (min === null || max === null ? [0, 1] : uPlot.rangeNum(min, max, 0.1, true)) },
      },
      padding: [12, 24, 0, 0],
      axes: [{ size: 40 }, { size: 70 }],
      // cap "square": a lone value between gaps (a zero-length line) still shows as a dot.
      series: [{}, { label, stroke: "#1f4e9c", width: 1, cap: "square", paths: columnPaths, points: { show: false } }],
    },
    [[], []],
    target,
  );
  return {
    u,
    show(rows, field, from, to) {
      // The x scale is [from, to + 1): the last second owns the last column's right edge.
      u.batch(() => {
        u.setData(columns(rows, field), true);
        u.setScale("x", { min: from, max: to + 1 });
      });
    },
  };
}

// ---- The page ----

let chart = null; // the plot, made once the signed-in view is shown
let listed = []; // the dataset's series, as listed
let place = { project: "", dataset: "" }; // where the listed series are
let current = null; // { series, field, from, to } the view asked for last (from/to null: the whole series)
let whole = null; // { from, to } of the series, once a whole-range read told it
let reading = null; // the AbortController of the read in flight
let drawn = null; // { rows, field, from, to, series } the drawing shows: hover and downloads read it

function notice(text) {
  const n = $("notice");
  n.textContent = text;
  n.hidden = !text;
}

function refusal(status, json) {
  if (status === 401 || status === 403) return refusalOf(status, json, "read these time series");
  const why = json?.detail ?? json?.message ?? json?.title;
  return `${status}${why ? `: ${why}` : ""}`;
}

async function call(path, headers, signal) {
  const res = await fetch(path, { headers, signal });
  const text = await res.text();
  let json;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, json };
}

/** Lists the dataset's series into the picker; true when it could. */
async function listSeries(project, dataset) {
  const r = await call(`/api/ts/dataset/${encodeURIComponent(dataset)}/timeseries/list`, tsHeaders(project, dataset));
  if (r.status === 401) {
    signOut(refusal(r.status, r.json));
    return false;
  }
  if (r.status !== 200) {
    notice(`Listing the series failed: ${refusal(r.status, r.json)}`);
    return false;
  }
  notice("");
  place = { project, dataset };
  listed = r.json.data;
  fillPicker();
  return true;
}

/** The first Single or Double field's column in a row (1 is the first field), or 0 when there is none. */
function drawnField(series) {
  const i = (series.dataFields ?? []).findIndex((f) => f.dataType === "Single" || f.dataType === "Double");
  return i + 1;
}

const seriesName = (s) => s.item?.name ?? s.id;

function fillPicker() {
  const filter = $("series-filter").value.trim().toLowerCase();
  const select = $("series");
  const chosen = select.value || current?.series;
  const options = [new Option("(choose a series)", "")];
  for (const s of listed) {
    if (filter && !seriesName(s).toLowerCase().includes(filter)) continue;
    // Option(text, value): both set as text, never parsed as HTML.
    options.push(new Option(`${seriesName(s)} (${s.id})`, s.id));
  }
  select.replaceChildren(...options);
  if (chosen && options.some((o) => o.value === chosen)) select.value = chosen;
}

/** Opens `seriesId` over [from, to] (null: its whole range). */
function open(seriesId, from = null, to = null) {
  const series = listed.find((s) => s.id === seriesId);
  if (!series) return;
  const field = drawnField(series);
  if (!field) {
    notice(`${seriesName(series)} has no Single or Double field to draw.`);
    return;
  }
  whole = null;
  chart.u.series[1].label = seriesName(series);
  current = { series: seriesId, field, from, to };
  drawn = null;
  showHover(null);
  enableDownloads(false);
  void read();
}

/** Reads the chart of `current` at the plot's width and draws it; a newer read aborts this one. */
async function read() {
  reading?.abort();
  const controller = new AbortController();
  reading = controller;
  const view = { ...current };
  // The plot area's width in device pixels: one chart bucket a pixel column (D50).
  const width = Math.floor(chart.u.bbox.width);
  const q = new URLSearchParams({ width: String(width) });
  if (view.from !== null) q.set("from", isoSecond(view.from));
  if (view.to !== null) q.set("to", isoSecond(view.to));
  const path = `/api/ts/dataset/${encodeURIComponent(place.dataset)}/timeseries/${encodeURIComponent(view.series)}/values/chart?${q}`;
  let r;
  try {
    r = await call(path, tsHeaders(place.project, place.dataset), controller.signal);
  } catch (e) {
    if (controller.signal.aborted) return; // the user moved on: a newer read is under way
    notice(`The chart read failed: ${e.message}`);
    return;
  }
  if (reading !== controller) return;
  reading = null;
  if (r.status === 401) {
    signOut(refusal(r.status, r.json));
    return;
  }
  if (r.status !== 200) {
    notice(`The chart read failed: ${refusal(r.status, r.json)}`);
    return;
  }
  notice("");
  const rows = r.json.data;
  if (view.from === null || view.to === null) {
    // The whole range is the series' first and last rows, which the chart read always holds (D50).
    if (rows.length === 0) {
      chart.show([], view.field, 0, 1);
      drawn = null;
      showHover(null);
      enableDownloads(false);
      $("summary").textContent = "This series has no rows.";
      return;
    }
    whole = { from: seconds(rows[0][0]), to: seconds(rows[rows.length - 1][0]) };
    view.from ??= whole.from;
    view.to ??= whole.to;
    if (current.series === view.series && current.from === null) Object.assign(current, { from: view.from, to: view.to });
  }
  chart.show(rows, view.field, view.from, view.to);
  drawn = { rows, field: view.field, from: view.from, to: view.to, series: listed.find((s) => s.id === view.series) };
  writeHash(view);
  enableDownloads(true);
  $("summary").textContent =
    `${isoSecond(view.from)} to ${isoSecond(view.to)}: ${rows.length} rows drawn at ${width} pixel columns. ` +
    summary(rows, view.field, fieldName(drawn.series, view.field));
}

const fieldName = (series, field) => series?.dataFields?.[field - 1]?.name ?? "value";
/** A cell as the values read prints it (D25), or "missing". */
const cellText = (v) => (v === null || v === undefined ? "missing" : String(v));

/**
 * The text summary of a view (issue 43 item 7): the lowest, highest and last
 * value of the drawn rows. The chart read keeps every bucket's lowest and
 * highest rows and the range's last row (D50), so these are the range's own,
 * as every row of it would give them. The last is the range's last row, said
 * "missing" when its value is.
 */
export function summary(rows, field, name) {
  let min = null;
  let max = null;
  for (const r of rows) {
    const v = r[field];
    if (v === null || v === undefined) continue;
    if (min === null || v < min[field]) min = r;
    if (max === null || v > max[field]) max = r;
  }
  if (rows.length === 0) return "No rows in this range.";
  const last = rows[rows.length - 1];
  const at = (r) => `${cellText(r[field])} at ${isoSecond(seconds(r[0]))}`;
  const extremes = min === null ? `${name}: no values in this range` : `${name}: min ${at(min)}, max ${at(max)}`;
  return `${extremes}, last ${at(last)}.`;
}

// ---- Hover: the nearest drawn row (issue 43 item 4) ----

/** The local time of epoch seconds `s` in the browser's time zone: 2024-01-01 09:00:00 (Asia/Tokyo, UTC+09:00). */
export function localTime(s) {
  const d = new Date(s * 1000);
  const two = (n) => String(n).padStart(2, "0");
  const off = -d.getTimezoneOffset();
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const offset = `UTC${off < 0 ? "-" : "+"}${two(Math.floor(Math.abs(off) / 60))}:${two(Math.abs(off) % 60)}`;
  const date = `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())}`;
  return `${date} ${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())} (${zone}, ${offset})`;
}

/** The first Flag field's column (1 is the first field) and its flags' names by id; null when there is none. */
function flagField(series) {
  const i = (series?.dataFields ?? []).findIndex((f) => f.dataType === "Flag");
  if (i < 0) return null;
  return { column: i + 1, names: new Map((series.dataFields[i].flags ?? []).map((f) => [f.id, f.name])) };
}

/** The text of row `row` of the drawing: UTC and local time, the drawn value, and the flag's name. */
export function rowText(row, field, series) {
  const t = seconds(row[0]);
  const parts = [isoSecond(t), `local ${localTime(t)}`, `${fieldName(series, field)} ${cellText(row[field])}`];
  const flag = flagField(series);
  if (flag) {
    const id = row[flag.column];
    const name = id === null || id === undefined ? "missing" : (flag.names.get(id) ?? `${id} (no name)`);
    parts.push(`${series.dataFields[flag.column - 1].name} ${name}`);
  }
  return parts.join(" · ");
}

/** The index of the drawn row nearest to second `t` (rows in time order, at least one). */
function nearest(rows, t) {
  let lo = 0;
  let hi = rows.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (seconds(rows[mid][0]) < t) lo = mid + 1;
    else hi = mid;
  }
  if (lo > 0 && t - seconds(rows[lo - 1][0]) <= seconds(rows[lo][0]) - t) lo--;
  return lo;
}

function showHover(text) {
  $("hover").textContent = text ?? "";
}

/** Shows the drawn row nearest to the pointer at `x` CSS pixels into the plot area. */
function hoverAt(x) {
  if (!drawn || drawn.rows.length === 0) return;
  const over = chart.u.over;
  // The plot's x scale is [from, to + 1): a CSS pixel's time, as the columns are laid out.
  const t = drawn.from + (x / over.clientWidth) * (drawn.to + 1 - drawn.from);
  showHover(rowText(drawn.rows[nearest(drawn.rows, t)], drawn.field, drawn.series));
}

// ---- Downloads of the visible range (issue 43 item 4) ----

const FORMATS = {
  csv: { accept: "application/json", ext: "csv", type: "text/csv" },
  arrow: { accept: "application/vnd.apache.arrow.stream", ext: "arrows", type: "application/vnd.apache.arrow.stream" },
  parquet: { accept: "application/vnd.apache.parquet", ext: "parquet", type: "application/vnd.apache.parquet" },
};

function enableDownloads(yes) {
  for (const b of document.querySelectorAll("#downloads button")) b.disabled = !yes;
}

/** A CSV cell: quoted when it holds a comma, quote or line break. */
const csvCell = (text) => (/[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text);

/**
 * CSV of a values read's rows, as `meridian import` takes it back: a header
 * (timestamp, then the data fields' names), timestamps in UTC with a Z, cells
 * as the JSON read prints them (D25), a missing value empty.
 */
export function csvOf(rows, series) {
  const names = (series?.dataFields ?? []).map((f) => csvCell(f.name));
  const lines = [["timestamp", ...names].join(",")];
  for (const r of rows) lines.push([isoSecond(seconds(r[0])), ...r.slice(1).map((v) => (v === null ? "" : String(v)))].join(","));
  return `${lines.join("\r\n")}\r\n`;
}

/**
 * Downloads the visible range in `format`: the values read of [from, to]
 * (every row, not the chart's), with the credential header, saved through a
 * Blob URL. Arrow and Parquet are the server's bytes as they come; the server
 * has no CSV, so CSV is made here from the JSON read.
 */
async function download(format) {
  if (!drawn) return;
  const f = FORMATS[format];
  const view = drawn;
  const status = $("download-status");
  const q = new URLSearchParams({ from: isoSecond(view.from), to: isoSecond(view.to) });
  const path = `/api/ts/dataset/${encodeURIComponent(place.dataset)}/timeseries/${encodeURIComponent(view.series.id)}/values?${q}`;
  status.textContent = `Reading ${format.toUpperCase()}...`;
  let blob;
  try {
    const res = await fetch(path, { headers: { ...tsHeaders(place.project, place.dataset), accept: f.accept } });
    if (res.status !== 200) {
      let json;
      try {
        json = await res.json();
      } catch {
        json = undefined;
      }
      status.textContent = `The download failed: ${refusal(res.status, json)}`;
      return;
    }
    if (format === "csv") {
      const rows = (await res.json()).data;
      blob = new Blob([csvOf(rows, view.series)], { type: f.type });
      status.textContent = `Saved ${rows.length} rows as CSV.`;
    } else {
      blob = new Blob([await res.arrayBuffer()], { type: f.type });
      status.textContent = `Saved ${blob.size} bytes of ${format === "arrow" ? "Arrow" : "Parquet"}.`;
    }
  } catch (e) {
    status.textContent = `The download failed: ${e.message}`;
    return;
  }
  // A link to a Blob URL, clicked: the browser saves it under this name. Navigating to a blob: URL of the
  // page's own origin needs nothing of the CSP (no fetch directive governs a download).
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = `${view.series.id}_${isoSecond(view.from)}_${isoSecond(view.to)}.${f.ext}`.replaceAll(":", "");
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

// ---- Pan and zoom: each changes `current` and reads its range ----

let pending = false;
/** One read a frame at most, of the latest view. */
function schedule() {
  if (pending) return;
  pending = true;
  requestAnimationFrame(() => {
    pending = false;
    void read();
  });
}

const MIN_SPAN = 2; // seconds: below that, the buckets are finer than a row can be

/** Zooms by `factor` (below 1: in) keeping the time under `at` (0..1 of the plot's width) in place. */
function zoom(factor, at = 0.5) {
  if (!current || current.from === null) return;
  const span = current.to - current.from + 1;
  const next = Math.max(MIN_SPAN, Math.round(span * factor));
  if (next === span) return;
  const pivot = current.from + span * at;
  current.from = Math.round(pivot - next * at);
  current.to = current.from + next - 1;
  schedule();
}

/** Pans by `share` of the visible range (positive: later). */
function pan(share) {
  if (!current || current.from === null) return;
  const shift = Math.round((current.to - current.from + 1) * share);
  if (shift === 0) return;
  current.from += shift;
  current.to += shift;
  schedule();
}

function reset() {
  if (!current) return;
  if (whole) Object.assign(current, whole);
  else Object.assign(current, { from: null, to: null });
  schedule();
}

function bindGestures() {
  const over = chart.u.over; // uPlot's layer over the plot area: the pointer's coordinates are the plot's
  over.addEventListener(
    "wheel",
    (e) => {
      e.preventDefault();
      const at = Math.min(1, Math.max(0, e.offsetX / over.clientWidth));
      zoom(e.deltaY < 0 ? 0.8 : 1.25, at);
    },
    { passive: false },
  );
  let drag = null;
  over.addEventListener("pointerdown", (e) => {
    if (!current || current.from === null || e.button !== 0) return;
    drag = { x: e.clientX, from: current.from, to: current.to };
    over.setPointerCapture(e.pointerId);
    $("chart").classList.add("dragging");
  });
  over.addEventListener("pointermove", (e) => {
    if (!drag) {
      hoverAt(e.offsetX);
      return;
    }
    const span = drag.to - drag.from + 1;
    const shift = Math.round(((drag.x - e.clientX) / over.clientWidth) * span);
    current.from = drag.from + shift;
    current.to = drag.to + shift;
    schedule();
  });
  const end = () => {
    drag = null;
    $("chart").classList.remove("dragging");
  };
  over.addEventListener("pointerup", end);
  over.addEventListener("pointercancel", end);
  over.addEventListener("dblclick", reset);
  $("chart").addEventListener("keydown", (e) => {
    const act = {
      ArrowLeft: () => pan(-0.1),
      ArrowRight: () => pan(0.1),
      "+": () => zoom(0.5),
      "=": () => zoom(0.5),
      "-": () => zoom(2),
      Home: reset,
    }[e.key];
    if (!act) return;
    e.preventDefault();
    act();
  });
}

// ---- The view in the URL: #project=...&dataset=...&series=ID,ID&from=...&to=... ----

function writeHash(view) {
  const parts = [
    `project=${encodeURIComponent(place.project)}`,
    `dataset=${encodeURIComponent(place.dataset)}`,
    `series=${encodeURIComponent(view.series)}`,
    `from=${isoSecond(view.from)}`,
    `to=${isoSecond(view.to)}`,
  ];
  // replaceState: a view is not a page of history, and it fires no hashchange.
  history.replaceState(null, "", `#${parts.join("&")}`);
}

function readHash() {
  const h = new URLSearchParams(location.hash.slice(1));
  const time = (name) => {
    const v = h.get(name);
    const s = v ? seconds(v) : NaN;
    return Number.isFinite(s) ? Math.floor(s) : null;
  };
  return {
    project: h.get("project") ?? "",
    dataset: h.get("dataset") ?? "",
    // Several ids are the link's form for overlays to come; one series is drawn for now, the first.
    series: (h.get("series") ?? "").split(",").find((s) => s !== "") ?? "",
    from: time("from"),
    to: time("to"),
  };
}

/** Opens the view the hash names, if it names one. */
async function openHash() {
  const h = readHash();
  if (!h.project || !h.dataset) return;
  $("pick").elements.project.value = h.project;
  $("pick").elements.dataset.value = h.dataset;
  if (!(await listSeries(h.project, h.dataset)) || !h.series) return;
  $("series").value = h.series;
  const both = h.from !== null && h.to !== null && h.from <= h.to;
  open(h.series, both ? h.from : null, both ? h.to : null);
}

// ---- Signing in, as the console does ----

function signedIn(yes) {
  $("sign-in").hidden = yes;
  $("app").hidden = !yes;
  $("sign-out").hidden = !yes;
  if (yes && !chart) {
    chart = plot($("chart"), $("chart").clientWidth);
    bindGestures();
  }
}

function signOut(reason = "") {
  reading?.abort();
  reading = null;
  notice("");
  showSignIn($("sign-in"), reason);
  signedIn(false);
}

function start() {
  signInForm($("sign-in"), "Kept in this tab only (sessionStorage), shared with the console.", () => {
    $("sign-in-error").textContent = "";
    signedIn(true);
    void openHash();
  });
  $("sign-out").addEventListener("click", () => signOut());
  $("pick").addEventListener("submit", (event) => {
    event.preventDefault();
    const f = $("pick").elements;
    void listSeries(f.project.value.trim(), f.dataset.value.trim());
  });
  $("series-filter").addEventListener("input", fillPicker);
  for (const b of document.querySelectorAll("#downloads button")) b.addEventListener("click", () => void download(b.dataset.format));
  $("series").addEventListener("change", () => {
    if ($("series").value) open($("series").value);
  });
  // Signed out, a new link waits for the sign-in (which opens it): nothing is asked without a credential.
  window.addEventListener("hashchange", () => {
    if (credential()) void openHash();
  });
  window.addEventListener("resize", () => {
    if (!chart) return;
    chart.u.setSize({ width: $("chart").clientWidth, height: HEIGHT });
    if (current?.from !== null && current) schedule(); // a new width is a new chart read
  });
  signedIn(credential() !== null);
  if (credential()) void openHash();
}

start();
