// Issue 40 item 6: the files a message POST and its SSE push pass. A server on
// a fresh SQLite file, in this process, with one SSE watcher of the feature;
// after a warm-up write (every module loaded, every statement prepared), V8's
// precise coverage counts the functions that run from the POST until the
// watcher has read the pushed set. A file counts when any of its functions ran
// in that window, in each of ROUNDS writes (so that a timer that happened to
// fire in one window, a checkpoint say, is not counted): the POST's own work,
// the change's notification, the listing the push reads and the SSE frame,
// and what the write wakes on its way (the webhook delivery turn: listed
// apart). Counted the same way on any checkout, with Node 26:
//   node_modules/node/bin/node bench/corridor/message-write.js [checkout with dist/ built]
import { Session } from "node:inspector/promises";
import { mkdtempSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { pino } from "pino";

const root = resolve(process.argv[2] ?? ".");
const dist = join(root, "dist");
const appModule = existsSync(join(dist, "app", "app.js")) ? join(dist, "app", "app.js") : join(dist, "app.js");
const { startMeridian } = await import(pathToFileURL(appModule).href);
const { loadSettings } = await import(pathToFileURL(join(dist, "config", "settings.js")).href);

const dir = mkdtempSync(join(tmpdir(), "meridian-corridor-"));
const settings = loadSettings({ MERIDIAN_PORT: "0", MERIDIAN_DB: join(dir, "m.db"), MERIDIAN_METRICS: "public" });
const app = await startMeridian(settings, pino({ level: "warn" }));
const { key } = await app.backend.apiKeys.create({
  clientId: "corridor",
  roles: ["BackOffice"],
  scopes: ["platform_iam_featurestatus_readwrite"],
  projects: [],
});
const headers = { "svc-open-api-key": key, "content-type": "application/json" };

const stream = await fetch(`${app.url}/api/admin/feature/corridor/message/stream`, {
  headers: { ...headers, accept: "text/event-stream" },
});
const reader = stream.body.getReader();
let seen = "";
/** Reads the stream until a set names `title`. */
async function pushed(title) {
  while (!seen.includes(`"${title}"`)) {
    const { value, done } = await reader.read();
    if (done) throw new Error("the stream ended");
    seen += new TextDecoder().decode(value);
  }
  seen = "";
}
const post = async (title) => {
  const now = Date.now();
  const body = {
    type: "Warning",
    title,
    body: "",
    startDate: new Date(now - 3600e3).toISOString(),
    expiringDate: new Date(now + 3600e3).toISOString(),
  };
  const r = await fetch(`${app.url}/api/admin/feature/corridor/message`, { method: "POST", headers, body: JSON.stringify(body) });
  if (r.status !== 201) throw new Error(`POST: ${r.status} ${await r.text()}`);
  await r.text();
};

const session = new Session();
session.connect();
await session.post("Profiler.enable");
await session.post("Profiler.startPreciseCoverage", { callCount: true, detailed: false });
for (const title of ["warm-up 1", "warm-up 2"]) {
  await post(title);
  await pushed(title);
}
const ROUNDS = 5;
const prefix = pathToFileURL(dist).href + "/";
const rounds = [];
for (let i = 0; i < ROUNDS; i++) {
  await session.post("Profiler.takePreciseCoverage"); // resets the counts
  await post(`counted ${i}`);
  await pushed(`counted ${i}`);
  const { result } = await session.post("Profiler.takePreciseCoverage");
  rounds.push(
    new Set(
      result
        .filter((s) => s.url.startsWith(prefix) && s.functions.some((f) => f.ranges[0].count > 0))
        .map((s) => "src/" + s.url.slice(prefix.length).replace(/\.js$/, ".ts")),
    ),
  );
}
await session.post("Profiler.stopPreciseCoverage");
const files = [...rounds[0]].filter((f) => rounds.every((r) => r.has(f))).sort();
const sometimes = [...new Set(rounds.flatMap((r) => [...r]))].filter((f) => !files.includes(f)).sort();
const delivery = files.filter((f) => f.includes("webhook"));
const corridor = files.filter((f) => !delivery.includes(f));
console.log(
  JSON.stringify(
    { checkout: root, files: files.length, corridor: corridor.length, deliveryTurn: delivery.length, notEveryRound: sometimes },
    null,
    1,
  ),
);
for (const f of corridor) console.log("  " + f);
console.log(" woken on the way (webhook delivery turn):");
for (const f of delivery) console.log("  " + f);
await reader.cancel().catch(() => {});
await app.close(100);
rmSync(dir, { recursive: true, force: true });
