// The series explorer (issue 43): pick a dataset's series, one or several,
// and see them drawn by uPlot (/ui/uplot/, served by Meridian) from the exact
// chart read (D50, D65), several through the many-series chart read, each
// unit on its own y axis. Every pixel exact: each view asks the chart read for
// exactly the plot's width in device pixels and the visible range, and draws
// the rows it gets, none left out, none made up; a pixel column is a chart
// bucket. Wheel and pinch zoom around the pointer, drag pans, double click
// zooms in (Shift: out), Home and "Whole range" show it all, arrows pan and
// +/- zoom; each change reads its range, aborting a read the user has moved
// past, and the last drawing stays until the new one comes. The time axis is
// in the browser's time zone or UTC. The view is in the URL's hash, so a link
// opens it. Missing values are gaps; flags are bands and markers with their
// names in a lane over the plot; hovering shows the nearest drawn row of
// each series (UTC and local time, value, flag name); a live text summary
// gives each series' min, max and last value in the range; the visible range
// downloads as CSV, Arrow or Parquet; "follow" keeps the newest rows in view
// (polled: Meridian has no live push of values). Signed in as the console is
// (ui/credential.js). User data (names, units, properties, flag names) is set
// as text only, or drawn on a canvas.
/* global uPlot */
import { authHeaders, credential, refusal as refusalOf, showSignIn, signInForm } from "/ui/credential.js";

const $ = (id) => document.getElementById(id);
const HEIGHT = 360;
/** The series' colours, in the order they are picked. */
export const COLOURS = ["#1f4e9c", "#c2410c", "#047857", "#7c3aed", "#b91c1c", "#0e7490"];
/** How often follow mode asks for newer rows, in milliseconds. */
const FOLLOW_MS = 1000;

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

/**
 * uPlot's columns from a read's rows: the time in seconds and the cells of column `field` (null: missing).
 * @param {unknown[][]} rows
 * @param {number} field
 * @param {ArrayLike<number> | null} [times] the rows' seconds, when parsed already
 */
export function columns(rows, field, times = null) {
  const xs = new Array(rows.length);
  const ys = new Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    xs[i] = times ? times[i] : seconds(rows[i][0]);
    ys[i] = rows[i][field] ?? null;
  }
  return [xs, ys];
}

/** The epoch seconds of each row of a read, parsed once a read (the drawing, its flags and its legend use them). */
export function timesOf(rows) {
  const t = new Float64Array(rows.length);
  for (let i = 0; i < rows.length; i++) t[i] = seconds(rows[i][0]);
  return t;
}

/**
 * uPlot's aligned data for several series ({ rows, field, times? }): the
 * times of every series' rows, once each, in order (the series' own rows are
 * in time order: merged, not sorted), and per series its cell at each time,
 * null when its value is missing and undefined where the series has no row
 * (not a gap: the line ignores it, see columnPaths).
 */
export function aligned(list) {
  if (list.length === 1) return columns(list[0].rows, list[0].field, list[0].times);
  const times = list.map((s) => s.times ?? timesOf(s.rows));
  const at = new Int32Array(list.length);
  const xs = [];
  const ys = list.map(() => []);
  for (;;) {
    let next = Infinity;
    for (let k = 0; k < list.length; k++) if (at[k] < times[k].length && times[k][at[k]] < next) next = times[k][at[k]];
    if (next === Infinity) break;
    xs.push(next);
    for (let k = 0; k < list.length; k++)
      if (at[k] < times[k].length && times[k][at[k]] === next) ys[k].push(list[k].rows[at[k]++][list[k].field] ?? null);
      else ys[k].push(undefined);
  }
  return [xs, ...ys];
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
 * which the square line cap (plot below) draws as a dot. With several series
 * a series has no row at another's times (undefined, see aligned): skipped.
 */
export function columnPaths(u, si, i0, i1) {
  const scale = u.series[si].scale;
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
    if (v === undefined) continue; // no row of this series at this time (another series has one)
    const y = v === null ? null : Math.round(u.valToPos(v, scale, true));
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

/** A y scale's range: the values' with a tenth's margin (an empty chart's: [0, 1]). */
const yRange = (_u, min, max) => (min === null || max === null ? [0, 1] : uPlot.rangeNum(min, max, 0.1, true));

/** UTC for uPlot's time axis: its labels and ticks in UTC rather than the browser's time zone. */
const utcDate = (ts) => uPlot.tzDate(new Date(ts * 1000), "Etc/UTC");

/**
 * A chart in `target`, `width` CSS pixels wide, of the series `series`
 * ([{ label, unit }], one by default): a y axis per unit, in the order the
 * units first come (left, right, left...; labelled with the unit when there
 * is one), the time axis in UTC when `utc`. `show(list, from, to)` draws
 * `list` ([{ rows, field, flags? }], one per series) over [from, to]; a
 * series' `flags` ({ column, names, levels }) are drawn in a lane of their
 * own over the plot, on a canvas of their own (the line's canvas holds the
 * line and axes only). The explorer and its test's reference drawings (every
 * row of the range) both draw through this.
 */
export function plot(target, width, { series = [{ label: "" }], utc = false } = {}) {
  const units = [];
  for (const s of series) if (!units.includes(s.unit ?? "")) units.push(s.unit ?? "");
  const scaleOf = (unit) => (units.indexOf(unit) === 0 ? "y" : `y${units.indexOf(unit) + 1}`);
  // The plot's width is the chart read's: nothing may change it but the page's layout and the series' units.
  // uPlot hides an axis whose scale has no range and pads by its tick labels, so every scale always has a
  // range (an empty chart: [0, 1]), and the axes, their labels and the padding have fixed sizes.
  const scales = { x: { time: true, auto: false, min: 0, max: 1, range: (_u, min, max) => [min, max] } };
  for (const unit of units) scales[scaleOf(unit)] = { range: yRange };
  const several = units.length > 1;
  const axes = [
    { size: 40 },
    ...units.map((unit, i) => {
      const first = series.findIndex((s) => (s.unit ?? "") === unit);
      return {
        scale: scaleOf(unit),
        side: i % 2 === 0 ? 3 : 1,
        size: 70,
        grid: { show: i === 0 },
        // Drawn on the canvas by fillText: a unit is text there whatever it holds.
        ...(unit ? { label: unit, labelSize: 20 } : {}),
        ...(several ? { stroke: COLOURS[first % COLOURS.length] } : {}),
      };
    }),
  ];
  let flagged = []; // per series of the drawing: its flags and rows, for the flag lane
  const u = new uPlot(
    {
      width,
      height: HEIGHT,
      legend: { show: false },
      ...(utc ? { tzDate: utcDate } : {}),
      // Our own pan and zoom below; uPlot's drag-to-zoom would fight them.
      cursor: { drag: { x: false, y: false, setScale: false }, points: { show: false } },
      scales,
      padding: [12, units.length > 1 ? 0 : 24, 0, 0],
      axes,
      // cap "square": a lone value between gaps (a zero-length line) still shows as a dot.
      series: [
        {},
        ...series.map((s, i) => ({
          label: s.label,
          scale: scaleOf(s.unit ?? ""),
          stroke: COLOURS[i % COLOURS.length],
          width: 1,
          cap: "square",
          paths: columnPaths,
          points: { show: false },
        })),
      ],
      hooks: { draw: [(self) => drawFlags(self, lane, flagged)] },
    },
    [[], ...series.map(() => [])],
    target,
  );
  // The flag lane: a canvas over the plot area, under the pointer's layer's events.
  const lane = document.createElement("canvas");
  lane.className = "flag-lane";
  u.over.append(lane);
  return {
    u,
    lane,
    show(list, from, to) {
      flagged = list.map((s) => (s.flags ? { flags: s.flags, rows: s.rows, times: s.times ?? timesOf(s.rows) } : null));
      // The x scale is [from, to + 1): the last second owns the last column's right edge.
      u.batch(() => {
        u.setData(aligned(list), true);
        u.setScale("x", { min: from, max: to + 1 });
      });
    },
  };
}

const LANE = 14; // CSS pixels: a flag lane's height
/** A flag's colour by its level (1 mild, 2 worse, 3 and up worst); a flag the field does not name is grey. */
const flagColour = (level) => (level === undefined ? "#6b7280" : level <= 1 ? "#d97706" : level === 2 ? "#ea580c" : "#b91c1c");

/**
 * The runs of flagged rows of a drawing's series: consecutive rows (of those
 * drawn) holding the same flag, neither 0 nor missing, each with its first
 * and last pixel column. The chart read keeps a bucket's first, last, lowest
 * and highest rows (D50): a flag only other rows of a bucket hold is not in
 * it, so it is not drawn (say so where it matters: README, decisions).
 */
export function flagRuns(rows, column, from, to, width, times = timesOf(rows)) {
  const runs = [];
  const span = to + 1 - from;
  for (let i = 0; i < rows.length; i++) {
    const id = rows[i][column];
    const k = Math.floor(((times[i] - from) * width) / span);
    const last = runs.at(-1);
    if (id === null || id === undefined || id === 0) {
      if (last) last.open = false;
      continue;
    }
    if (last?.open && last.id === id) last.to = k;
    else runs.push({ id, from: k, to: k, open: true });
  }
  return runs.map(({ id, from: a, to: b }) => ({ id, from: a, to: b }));
}

/** Draws the flags of `flagged` (per series, null when it has none) in lanes at the top of the plot: a band per run, a marker at its start, the name where it fits. */
function drawFlags(u, lane, flagged) {
  const dpr = devicePixelRatio;
  const width = Math.floor(u.bbox.width);
  const height = Math.round(Math.max(1, flagged.filter(Boolean).length) * LANE * dpr);
  // Sized only when its size changes: setting a canvas's size allocates its bitmap anew.
  if (lane.width !== width || lane.height !== height) {
    lane.width = width;
    lane.height = height;
    lane.style.height = `${height / dpr}px`;
  }
  const ctx = lane.getContext("2d");
  ctx.clearRect(0, 0, lane.width, lane.height);
  ctx.font = `${Math.round(10 * dpr)}px system-ui, sans-serif`;
  ctx.textBaseline = "middle";
  const from = u.scales.x.min;
  const to = u.scales.x.max - 1;
  let y = 0;
  for (const f of flagged) {
    if (!f) continue;
    const h = LANE * dpr;
    const runs = flagRuns(f.rows, f.flags.column, from, to, width, f.times);
    runs.forEach((run, i) => {
      const colour = flagColour(f.flags.levels.get(run.id));
      ctx.globalAlpha = 0.3;
      ctx.fillStyle = colour;
      ctx.fillRect(run.from, y, run.to - run.from + 1, h);
      ctx.globalAlpha = 1;
      ctx.fillRect(run.from, y, Math.max(1, Math.round(2 * dpr)), h); // the marker
      const name = f.flags.names.get(run.id) ?? `${run.id} (no name)`;
      const room = (runs[i + 1]?.from ?? width) - run.from - 4 * dpr;
      if (ctx.measureText(name).width <= room) {
        ctx.fillStyle = "#111";
        ctx.fillText(name, run.from + 4 * dpr, y + h / 2);
      }
    });
    y += h;
  }
}

// ---- The page ----

let chart = null; // the plot: { u, lane, show, key } (key: the series' labels and units and the time zone it was made for)
let listed = []; // the dataset's series, as listed
let place = { project: "", dataset: "" }; // where the listed series are
let current = null; // { ids, from, to } the view asked for last (from/to null: the series' whole range)
let whole = null; // { from, to } of the series, once a whole-range read told it
let reading = null; // the AbortController of the read in flight
let drawn = null; // { list: [{ series, field, rows }], from, to } the drawing shows: hover, downloads and the summary read it

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

async function call(path, headers, signal, body) {
  const res = await fetch(path, {
    method: body === undefined ? "GET" : "POST",
    headers: body === undefined ? headers : { ...headers, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
  });
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
const unitOf = (s) => s?.item?.unit ?? "";

// ---- Picking series: search by name and property (issue 43 item 1) ----

const COMPARE = {
  "=": (a, b) => a === b,
  "!=": (a, b) => a !== b,
  "<": (a, b) => a < b,
  "<=": (a, b) => a <= b,
  ">": (a, b) => a > b,
  ">=": (a, b) => a >= b,
};

/**
 * Whether series `s` matches the search `text`: every word must hold. A word
 * `name<op>number` (op one of = != < <= > >=) compares the series' property
 * `name` (its properties are numbers, D29); any other word is looked for,
 * ignoring case, in the series' name, unit, item, id and property names.
 */
export function matches(s, text) {
  const words = text.trim().split(/\s+/).filter(Boolean);
  const props = s.properties ?? {};
  const hay = [seriesName(s), unitOf(s), s.item?.item ?? "", s.id, ...Object.keys(props)].join("\n").toLowerCase();
  return words.every((w) => {
    const m = /^([^=<>!]+)(!=|<=|>=|=|<|>)(-?\d+(?:\.\d+)?(?:e[+-]?\d+)?)$/i.exec(w);
    if (m) {
      const key = Object.keys(props).find((k) => k.toLowerCase() === m[1].toLowerCase());
      return key !== undefined && COMPARE[m[2]](props[key], Number(m[3]));
    }
    return hay.includes(w.toLowerCase());
  });
}

/** A series as its option says it: name (unit) and id, then its properties. */
const optionText = (s) => {
  const props = Object.entries(s.properties ?? {}).map(([k, v]) => `${k}=${v}`);
  return `${seriesName(s)}${unitOf(s) ? ` [${unitOf(s)}]` : ""} (${s.id})${props.length ? ` ${props.join(" ")}` : ""}`;
};

function fillPicker() {
  const text = $("series-search").value;
  const select = $("series");
  const chosen = new Set([...select.selectedOptions].map((o) => o.value));
  if (chosen.size === 0) for (const id of current?.ids ?? []) chosen.add(id);
  const options = [];
  for (const s of listed) {
    // The chosen stay listed, chosen, whatever the search: they are drawn.
    if (!chosen.has(s.id) && !matches(s, text)) continue;
    // Option(text, value): both set as text, never parsed as HTML.
    const o = new Option(optionText(s), s.id, false, chosen.has(s.id));
    options.push(o);
  }
  select.replaceChildren(...options);
  $("search-count").textContent = `${options.length} of ${listed.length} series`;
}

/** Opens the series `ids` (in that order) over [from, to] (null: their whole range). */
function open(ids, from = null, to = null) {
  const picked = ids.map((id) => listed.find((s) => s.id === id)).filter(Boolean);
  const drawable = picked.filter((s) => drawnField(s) > 0);
  const none = picked.filter((s) => drawnField(s) === 0);
  notice(none.length ? `${none.map(seriesName).join(", ")}: no Single or Double field to draw.` : "");
  if (drawable.length === 0) return;
  whole = null;
  current = { ids: drawable.map((s) => s.id), from, to };
  drawn = null;
  showHover(null);
  enableDownloads(false);
  makeChart();
  void read();
}

/** The chart for the current series and time zone: made anew when they change (the axes and so the plot's width may). */
function makeChart() {
  const series = current ? current.ids.map((id) => listed.find((s) => s.id === id)) : [];
  const spec = { series: series.map((s) => ({ label: seriesName(s), unit: unitOf(s) })), utc: $("tz").value === "utc" };
  const key = JSON.stringify(spec);
  if (chart?.key === key) return;
  chart?.u.destroy();
  chart = { ...plot($("chart"), $("chart").clientWidth, spec.series.length ? spec : { utc: spec.utc }), key };
  bindGestures();
  if (drawn && series.length) chart.show(drawnList(drawn), drawn.from, drawn.to);
}

/** The ranges' path of the chart read: one series' (GET) or several's (POST, the id list as the body). */
function chartRequest(ids, from, to, width) {
  const q = new URLSearchParams({ width: String(width) });
  if (from !== null) q.set("from", isoSecond(from));
  if (to !== null) q.set("to", isoSecond(to));
  const ds = `/api/ts/dataset/${encodeURIComponent(place.dataset)}/timeseries`;
  return ids.length === 1
    ? { path: `${ds}/${encodeURIComponent(ids[0])}/values/chart?${q}`, body: undefined, one: true }
    : { path: `${ds}/values/chart?${q}`, body: ids, one: false };
}

/** A chart read of `ids`: { status, json, rows: [rows per series] }. */
async function chartRead(ids, from, to, width, signal) {
  const req = chartRequest(ids, from, to, width);
  const r = await call(req.path, tsHeaders(place.project, place.dataset), signal, req.body);
  return { ...r, rows: r.status === 200 ? (req.one ? [r.json.data] : r.json.data) : null };
}

/** The first and last timestamps over the rows of `rowsOf` (per series), or null when none has rows. */
function boundsOf(rowsOf) {
  let from = Infinity;
  let to = -Infinity;
  for (const rows of rowsOf)
    if (rows.length) {
      from = Math.min(from, seconds(rows[0][0]));
      to = Math.max(to, seconds(rows[rows.length - 1][0]));
    }
  return from <= to ? { from, to } : null;
}

/** Reads the chart of `current` at the plot's width and draws it; a newer read aborts this one. */
async function read() {
  reading?.abort();
  const controller = new AbortController();
  reading = controller;
  const view = { ...current };
  const wholeAsked = view.from === null || view.to === null;
  // The plot area's width in device pixels: one chart bucket a pixel column (D50).
  const width = Math.floor(chart.u.bbox.width);
  let r;
  try {
    if ((view.from === null || view.to === null) && view.ids.length > 1) {
      // Several series' whole range: each one's first and last rows (a chart one column wide holds them),
      // then the chart of the range they span together.
      const b = await chartRead(view.ids, null, null, 1, controller.signal);
      if (b.status === 200) Object.assign(view, boundsOf(b.rows) ?? { from: 0, to: 0 });
      r = b.status === 200 ? await chartRead(view.ids, view.from, view.to, width, controller.signal) : b;
    } else r = await chartRead(view.ids, view.from, view.to, width, controller.signal);
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
  if (wholeAsked) {
    // The whole range is the series' first and last rows, which the chart read always holds (D50).
    const b = boundsOf(r.rows);
    if (!b) {
      chart.show([], 0, 1);
      drawn = null;
      showHover(null);
      enableDownloads(false);
      showSummary(["These series have no rows."]);
      return;
    }
    Object.assign(view, b);
  }
  if (wholeAsked && current.ids.join() === view.ids.join() && current.from === null) {
    whole = { from: view.from, to: view.to };
    Object.assign(current, whole);
  }
  const series = view.ids.map((id) => listed.find((s) => s.id === id));
  const list = series.map((s, i) => ({ series: s, field: drawnField(s), rows: r.rows[i], times: timesOf(r.rows[i]) }));
  drawn = { list, from: view.from, to: view.to };
  chart.show(drawnList(drawn), view.from, view.to);
  writeHash(view);
  enableDownloads(true);
  const total = drawn.list.reduce((n, s) => n + s.rows.length, 0);
  showSummary([
    `${isoSecond(view.from)} to ${isoSecond(view.to)}: ${total} rows drawn at ${width} pixel columns, times on the axis in ${zoneName()}.`,
    ...drawn.list.map((s) => summary(s.rows, s.field, `${seriesName(s.series)} ${fieldName(s.series, s.field)}`)),
  ]);
  showFlagLegend();
}

/** The time axis as drawn: its ticks (epoch seconds) and their labels; for tests and tools, null before a chart. */
export function timeTicks() {
  const axis = chart?.u.axes[0];
  if (!axis?._splits || !axis._values) return null;
  return { splits: [...axis._splits], labels: [...axis._values] };
}

/** What plot().show takes of a drawing: per series its rows, drawn field and flags. */
const drawnList = (d) => d.list.map((s) => ({ rows: s.rows, field: s.field, times: s.times, flags: flagField(s.series) }));

/** The time zone the axis shows: UTC or the browser's own. */
const zoneName = () => ($("tz").value === "utc" ? "UTC" : Intl.DateTimeFormat().resolvedOptions().timeZone);

/** The summary: the view's range, then a line per series (a list, read by screen readers as it changes). */
function showSummary(lines) {
  const [head, ...each] = lines;
  const p = document.createElement("p");
  p.textContent = head;
  const ul = document.createElement("ul");
  for (const line of each) {
    const li = document.createElement("li");
    li.textContent = line;
    ul.append(li);
  }
  $("summary").replaceChildren(p, ...(each.length ? [ul] : []));
}

/** The flags in view, by series and name, with how many runs of each are drawn. */
function showFlagLegend() {
  const parts = [];
  const width = Math.floor(chart.u.bbox.width);
  for (const s of drawn?.list ?? []) {
    const f = flagField(s.series);
    if (!f) continue;
    const counts = new Map();
    for (const run of flagRuns(s.rows, f.column, drawn.from, drawn.to, width, s.times)) counts.set(run.id, (counts.get(run.id) ?? 0) + 1);
    // In the order the field declares its flags, then those it does not name, by id.
    const order = [...f.names.keys()];
    const rank = (id) => (order.includes(id) ? order.indexOf(id) : order.length + id);
    const named = [...counts].sort(([a], [b]) => rank(a) - rank(b)).map(([id, n]) => `${f.names.get(id) ?? `${id} (no name)`} ×${n}`);
    parts.push(`${seriesName(s.series)} ${s.series.dataFields[f.column - 1].name}: ${named.length ? named.join(", ") : "none in view"}`);
  }
  $("flags").textContent = parts.length ? `Flags drawn: ${parts.join("; ")}.` : "";
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
  if (rows.length === 0) return `${name}: no rows in this range.`;
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

/** The first Flag field's column (1 is the first field) and its flags' names and levels by id; null when there is none. */
function flagField(series) {
  const i = (series?.dataFields ?? []).findIndex((f) => f.dataType === "Flag");
  if (i < 0) return null;
  const flags = series.dataFields[i].flags ?? [];
  return { column: i + 1, names: new Map(flags.map((f) => [f.id, f.name])), levels: new Map(flags.map((f) => [f.id, f.level])) };
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

/** Shows each series' drawn row nearest to the pointer at `x` CSS pixels into the plot area (one line a series). */
function hoverAt(x) {
  if (!drawn) return;
  const over = chart.u.over;
  // The plot's x scale is [from, to + 1): a CSS pixel's time, as the columns are laid out.
  const t = drawn.from + (x / over.clientWidth) * (drawn.to + 1 - drawn.from);
  const several = drawn.list.length > 1;
  const lines = drawn.list
    .filter((s) => s.rows.length > 0)
    .map((s) => `${several ? `${seriesName(s.series)}: ` : ""}${rowText(s.rows[nearest(s.rows, t)], s.field, s.series)}`);
  showHover(lines.join("\n"));
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
 * Downloads the visible range in `format`, a file per series drawn: the
 * values read of [from, to] (every row, not the chart's), with the credential
 * header, saved through a Blob URL. Arrow and Parquet are the server's bytes
 * as they come; the server has no CSV, so CSV is made here from the JSON read.
 */
async function download(format) {
  if (!drawn) return;
  const status = $("download-status");
  const said = [];
  for (const s of drawn.list) {
    const text = await downloadOne(format, s.series, drawn.from, drawn.to);
    if (text === null) return;
    said.push(text);
  }
  status.textContent = said.join(" ");
}

/** Saves one series' range; the words said of it, or null when it failed (and the status says why). */
async function downloadOne(format, series, from, to) {
  const f = FORMATS[format];
  const status = $("download-status");
  const q = new URLSearchParams({ from: isoSecond(from), to: isoSecond(to) });
  const path = `/api/ts/dataset/${encodeURIComponent(place.dataset)}/timeseries/${encodeURIComponent(series.id)}/values?${q}`;
  status.textContent = `Reading ${format.toUpperCase()}...`;
  let blob;
  let said;
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
      return null;
    }
    if (format === "csv") {
      const rows = (await res.json()).data;
      blob = new Blob([csvOf(rows, series)], { type: f.type });
      said = `Saved ${rows.length} rows as CSV.`;
    } else {
      blob = new Blob([await res.arrayBuffer()], { type: f.type });
      said = `Saved ${blob.size} bytes of ${format === "arrow" ? "Arrow" : "Parquet"}.`;
    }
  } catch (e) {
    status.textContent = `The download failed: ${e.message}`;
    return null;
  }
  // A link to a Blob URL, clicked: the browser saves it under this name. Navigating to a blob: URL of the
  // page's own origin needs nothing of the CSP (no fetch directive governs a download).
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = `${series.id}_${isoSecond(from)}_${isoSecond(to)}.${f.ext}`.replaceAll(":", "");
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
  return said;
}

// ---- Pan and zoom: each changes `current` and reads its range ----

let pending = false;
/**
 * One read of the latest view once the input's task is done: events of one
 * task (a wheel's, a pinch's two pointers) make one read. Not a frame later:
 * Chromium sends pointer and wheel events once a frame already, and waiting
 * for the next frame cost every step up to 16 ms before its read was asked.
 * A read aborts the one before it (read), so a fast gesture asks for at most
 * one range a frame and keeps none it moved past.
 */
function schedule() {
  if (pending) return;
  pending = true;
  queueMicrotask(() => {
    pending = false;
    void read();
  });
}

const MIN_SPAN = 2; // seconds: below that, the buckets are finer than a row can be

/** Zooms by `factor` (below 1: in) keeping the time under `at` (0..1 of the plot's width) in place; following, the end stays. */
function zoom(factor, at = 0.5) {
  if (!current || current.from === null) return;
  if (following()) at = 1;
  const span = current.to - current.from + 1;
  const next = Math.max(MIN_SPAN, Math.round(span * factor));
  if (next === span) return;
  const pivot = current.from + span * at;
  current.from = Math.round(pivot - next * at);
  current.to = current.from + next - 1;
  schedule();
}

/** Pans by `share` of the visible range (positive: later); a pan ends follow mode. */
function pan(share) {
  if (!current || current.from === null) return;
  const shift = Math.round((current.to - current.from + 1) * share);
  if (shift === 0) return;
  stopFollowing();
  current.from += shift;
  current.to += shift;
  schedule();
}

/** The whole range of the series drawn. */
function reset() {
  if (!current) return;
  stopFollowing();
  if (whole) Object.assign(current, whole);
  else Object.assign(current, { from: null, to: null });
  schedule();
}

/** Where `clientX` lies across the plot area, 0..1. */
const across = (clientX) => {
  const box = chart.u.over.getBoundingClientRect();
  return Math.min(1, Math.max(0, (clientX - box.left) / box.width));
};

function bindGestures() {
  const over = chart.u.over; // uPlot's layer over the plot area: the pointer's coordinates are the plot's
  over.addEventListener(
    "wheel",
    (e) => {
      e.preventDefault();
      zoom(e.deltaY < 0 ? 0.8 : 1.25, across(e.clientX));
    },
    { passive: false },
  );
  // Pointers down on the plot: one drags (pans), two pinch (zoom around their middle, by their distance).
  const down = new Map();
  let drag = null;
  let pinch = null;
  const spread = () => {
    const [a, b] = [...down.values()];
    return { d: Math.max(1, Math.abs(a.x - b.x)), mid: (a.x + b.x) / 2 };
  };
  over.addEventListener("pointerdown", (e) => {
    if (!current || current.from === null || (e.pointerType === "mouse" && e.button !== 0)) return;
    down.set(e.pointerId, { x: e.clientX });
    over.setPointerCapture(e.pointerId);
    if (down.size === 2) {
      drag = null;
      const { d, mid } = spread();
      pinch = { d, at: across(mid), from: current.from, to: current.to };
    } else if (down.size === 1) {
      drag = { x: e.clientX, from: current.from, to: current.to };
      $("chart").classList.add("dragging");
    }
  });
  over.addEventListener("pointermove", (e) => {
    if (!down.has(e.pointerId)) {
      hoverAt(e.offsetX);
      return;
    }
    down.set(e.pointerId, { x: e.clientX });
    if (pinch && down.size === 2) {
      const { d } = spread();
      const span = pinch.to - pinch.from + 1;
      const next = Math.max(MIN_SPAN, Math.round((span * pinch.d) / d));
      const pivot = pinch.from + span * pinch.at;
      current.from = Math.round(pivot - next * pinch.at);
      current.to = current.from + next - 1;
      schedule();
      return;
    }
    if (!drag) return;
    const span = drag.to - drag.from + 1;
    const shift = Math.round(((drag.x - e.clientX) / over.clientWidth) * span);
    if (shift === 0) return;
    stopFollowing();
    current.from = drag.from + shift;
    current.to = drag.to + shift;
    schedule();
  });
  const end = (e) => {
    down.delete(e.pointerId);
    if (down.size < 2) pinch = null;
    if (down.size === 0) {
      drag = null;
      $("chart").classList.remove("dragging");
    }
  };
  over.addEventListener("pointerup", end);
  over.addEventListener("pointercancel", end);
  // Double click zooms in around the pointer; with Shift, out.
  over.addEventListener("dblclick", (e) => zoom(e.shiftKey ? 2 : 0.5, across(e.clientX)));
}

function bindKeys() {
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

// ---- Follow: the newest rows in view as they are written (issue 43 item 4) ----

let followTimer = null;
const following = () => followTimer !== null;

/**
 * Every FOLLOW_MS, asks for the rows after the view's end (a chart read one
 * column wide from the second after it: each series' first and last newer
 * rows, nothing when there are none); when there are, the view moves to end
 * at the newest, its span kept, and reads it. Polled: Meridian pushes
 * messages (D46) but not values.
 */
async function followTick() {
  if (!current || current.from === null || reading) return;
  const view = { ...current };
  let r;
  try {
    r = await chartRead(view.ids, view.to + 1, null, 1);
  } catch {
    return; // the next tick asks again
  }
  if (r.status !== 200 || !following() || current.to !== view.to) return;
  const b = boundsOf(r.rows);
  if (!b) return;
  const span = current.to - current.from + 1;
  current.to = b.to;
  current.from = b.to - span + 1;
  schedule();
}

function startFollowing() {
  if (following()) return;
  followTimer = setInterval(() => void followTick(), FOLLOW_MS);
  $("follow").checked = true;
  void followTick();
}

function stopFollowing() {
  if (!following()) return;
  clearInterval(followTimer);
  followTimer = null;
  $("follow").checked = false;
}

// ---- The view in the URL: #project=...&dataset=...&series=ID,ID&from=...&to=...[&tz=utc] ----

function writeHash(view) {
  const parts = [
    `project=${encodeURIComponent(place.project)}`,
    `dataset=${encodeURIComponent(place.dataset)}`,
    `series=${view.ids.map(encodeURIComponent).join(",")}`,
    `from=${isoSecond(view.from)}`,
    `to=${isoSecond(view.to)}`,
    ...($("tz").value === "utc" ? ["tz=utc"] : []),
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
    ids: (h.get("series") ?? "").split(",").filter((s) => s !== ""),
    from: time("from"),
    to: time("to"),
    utc: h.get("tz") === "utc",
  };
}

/** Opens the view the hash names, if it names one. */
async function openHash() {
  const h = readHash();
  $("tz").value = h.utc ? "utc" : "local";
  if (!h.project || !h.dataset) return;
  $("pick").elements.project.value = h.project;
  $("pick").elements.dataset.value = h.dataset;
  if (!(await listSeries(h.project, h.dataset)) || h.ids.length === 0) return;
  for (const o of $("series").options) o.selected = h.ids.includes(o.value);
  const both = h.from !== null && h.to !== null && h.from <= h.to;
  open(h.ids, both ? h.from : null, both ? h.to : null);
}

// ---- Signing in, as the console does (ui/credential.js) ----

function signedIn(yes) {
  $("sign-in").hidden = yes;
  $("app").hidden = !yes;
  $("sign-out").hidden = !yes;
  if (yes && !chart) makeChart();
}

function signOut(reason = "") {
  reading?.abort();
  reading = null;
  stopFollowing();
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
  $("series-search").addEventListener("input", fillPicker);
  for (const b of document.querySelectorAll("#downloads button")) b.addEventListener("click", () => void download(b.dataset.format));
  $("series").addEventListener("change", () => {
    const ids = [...$("series").selectedOptions].map((o) => o.value);
    // Those drawn keep their order, the newly picked come after them.
    const kept = (current?.ids ?? []).filter((id) => ids.includes(id));
    if (ids.length) open([...kept, ...ids.filter((id) => !kept.includes(id))]);
  });
  $("whole").addEventListener("click", reset);
  $("tz").addEventListener("change", () => {
    if (!chart) return;
    makeChart();
    if (current?.from !== null && current) schedule();
  });
  $("follow").addEventListener("change", () => ($("follow").checked ? startFollowing() : stopFollowing()));
  bindKeys();
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
