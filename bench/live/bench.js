#!/usr/bin/env node
// Live push (issue 17, D46): BENCH_WATCHERS (1,000) Server-Sent Events
// streams of one feature on one Meridian process (SQLite), held by this
// process over HTTP/1.1 (fetch opens a connection per open stream). BENCH_WRITES (20) messages are
// then created one after another through the REST API; for each, the time
// from sending the POST to the new set's arrival on every stream. Baseline,
// same run: the same writes seen by a single stream. Also the server's RSS
// with no stream and with all of them open (memory per watcher). Then D61/D62:
// the same number of streams split over 10 audiences (a token's groups) and 3
// languages (Accept-Language), each write aimed at one audience and
// translated: the time from the POST to the new set on every stream of that
// audience (the others get no event), against the single-audience figure.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../dist/sqlite/database.js";
import { SqliteApiKeyStore } from "../../dist/sqlite/api-key-store.js";
import { median } from "../client-rounds.js";
import { reporter, spread } from "../report.js";
import { startMeridian } from "../server.js";
import { SignJWT } from "jose";

const WATCHERS = Number(process.env.BENCH_WATCHERS ?? 1000);
const WRITES = Number(process.env.BENCH_WRITES ?? 20);
const AUDIENCES = 10;
const LANGUAGES = [undefined, "de", "fr"];
const JWT_SECRET = "bench-secret-of-thirty-two-bytes!";
const emit = reporter("live");
const dir = mkdtempSync(join(tmpdir(), "meridian-bench-live-"));
const dbPath = join(dir, "m.db");
const db = openDatabase(dbPath);
const key = new SqliteApiKeyStore(db).createNow({
  clientId: "bench",
  roles: ["BackOffice"],
  scopes: ["platform_iam_featurestatus_readwrite"],
  projects: [],
}).key;
db.close();

// Every stream is this process's, with one key, from one address: a single client to the server (D54).
process.env.MERIDIAN_MAX_WATCHERS_PER_CLIENT ??= String(WATCHERS + 1);
process.env.MERIDIAN_JWT_SECRET = JWT_SECRET;
const server = await startMeridian(dbPath);
const url = server.address;
const headers = { "svc-open-api-key": key };
const rssMiB = () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${server.process.pid}/status`, "utf8"))[1]) / 1024;
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];

/** A stream of `feature` that calls onSet(number of messages) at each event. */
async function watcher(onSet, feature = "live", streamHeaders = headers) {
  const abort = new AbortController();
  const r = await fetch(`${url}/api/admin/feature/${feature}/message/stream`, { headers: streamHeaders, signal: abort.signal });
  if (r.status !== 200) throw new Error(`stream: ${r.status}`);
  void (async () => {
    const decoder = new TextDecoder();
    let text = "";
    try {
      for await (const chunk of r.body) {
        text += decoder.decode(chunk, { stream: true });
        let end;
        while ((end = text.indexOf("\n\n")) !== -1) {
          const block = text.slice(0, end);
          text = text.slice(end + 2);
          const data = /^data: (.*)$/m.exec(block);
          if (data) onSet(JSON.parse(data[1]).data.length);
        }
      }
    } catch {
      // the stream ends by abort() below, when the benchmark is done with it
    }
  })();
  return () => abort.abort();
}

/**
 * Opens n streams of `feature` (stream i with streamHeaders(i)); runs WRITES
 * writes (write w made by fields(w)); per write, the time until every stream
 * it affects (affects(w, i)) saw it. Returns all delivery times.
 */
async function measure(n, firstTitle, { feature = "live", streamHeaders = () => headers, fields = () => ({}), affects = () => true } = {}) {
  let sent = 0;
  let pending = 0;
  let allSeen;
  const deliveries = [];
  const seen = new Array(n).fill(-1); // each stream's set size
  const target = new Array(n).fill(-1); // the size the current write makes it, for an affected stream
  const closers = [];
  let ready = 0;
  let allReady;
  const readyP = new Promise((r) => (allReady = r));
  for (let i = 0; i < n; i++) {
    closers.push(
      await watcher(
        (size) => {
          if (seen[i] === -1) {
            seen[i] = size;
            if (++ready === n) allReady();
            return;
          }
          if (size === target[i] && seen[i] !== size) {
            seen[i] = size;
            deliveries.push(performance.now() - sent);
            if (--pending === 0) allSeen();
          }
        },
        feature,
        streamHeaders(i),
      ),
    );
  }
  await readyP;
  const rss = rssMiB();
  for (let w = 0; w < WRITES; w++) {
    pending = 0;
    for (let i = 0; i < n; i++) {
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- callers pass their own; the default affects all
      target[i] = affects(w, i) ? seen[i] + 1 : -1;
      if (target[i] !== -1) pending++;
    }
    const done = new Promise((r) => (allSeen = r));
    sent = performance.now();
    const now = Date.now();
    const r = await fetch(`${url}/api/admin/feature/${feature}/message`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({
        type: "Warning",
        title: `${firstTitle} ${w}`,
        body: "",
        startDate: new Date(now - 60_000).toISOString(),
        expiringDate: new Date(now + 3_600_000).toISOString(),
        ...fields(w),
      }),
    });
    if (r.status !== 201) throw new Error(`write: ${r.status}`);
    await r.text();
    await done;
  }
  closers.forEach((c) => c());
  return { deliveries, rss };
}

/** D61, D62: stream i belongs to audience i % 10 (a token's groups) and reads in language floor(i / 10) % 3; write w is for audience w % 10. */
async function measureTargeted(n) {
  const secret = new TextEncoder().encode(JWT_SECRET);
  const tokens = [];
  for (let a = 0; a < AUDIENCES; a++) {
    tokens.push(
      await new SignJWT({ sub: `reader-${a}`, client_id: "targeted", scope: "platform_iam_featurestatus_read", groups: [`audience-${a}`] })
        .setProtectedHeader({ alg: "HS256" })
        .setExpirationTime("1h")
        .sign(secret),
    );
  }
  const language = (i) => LANGUAGES[Math.floor(i / AUDIENCES) % LANGUAGES.length];
  return measure(n, "targeted", {
    feature: "targeted",
    streamHeaders: (i) => ({
      authorization: `Bearer ${tokens[i % AUDIENCES]}`,
      ...(language(i) ? { "accept-language": language(i) } : {}),
    }),
    fields: (w) => ({
      audiences: [`audience-${w % AUDIENCES}`],
      translations: { de: { title: `Nachricht ${w}` }, fr: { title: `Message ${w} (fr)` } },
    }),
    affects: (w, i) => i % AUDIENCES === w % AUDIENCES,
  });
}

try {
  await new Promise((r) => setTimeout(r, 300));
  const idle = rssMiB();
  const one = await measure(1, "one");
  await new Promise((r) => setTimeout(r, 500));
  const many = await measure(WATCHERS, "many");
  await new Promise((r) => setTimeout(r, 500));
  const targeted = await measureTargeted(WATCHERS);
  const base99 = pct(one.deliveries, 99);
  emit(`1 watcher, ${WRITES} writes`, "delivery p50", spread(one.deliveries), "ms");
  emit(`1 watcher, ${WRITES} writes`, "delivery p99", base99, "ms");
  emit(`${WATCHERS} watchers, ${WRITES} writes`, "delivery p50", spread(many.deliveries), "ms", median(one.deliveries));
  emit(`${WATCHERS} watchers, ${WRITES} writes`, "delivery p99", pct(many.deliveries, 99), "ms", base99);
  emit(`${WATCHERS} watchers, ${WRITES} writes`, "delivery max", Math.max(...many.deliveries), "ms");
  const split = `${WATCHERS} watchers, ${AUDIENCES} audiences x ${LANGUAGES.length} languages, ${WRITES} targeted writes`;
  emit(split, "delivery p50", median(targeted.deliveries), "ms", median(many.deliveries));
  emit(split, "delivery p99", pct(targeted.deliveries, 99), "ms", pct(many.deliveries, 99));
  emit(split, "delivery max", Math.max(...targeted.deliveries), "ms");
  emit(`${WATCHERS} watchers`, "server RSS per watcher", ((many.rss - idle) * 1024) / WATCHERS, "KiB");
  emit(`${WATCHERS} watchers`, "server RSS", many.rss, "MiB", idle);
} finally {
  server.process.kill();
  rmSync(dir, { recursive: true, force: true });
}
