#!/usr/bin/env node
// The reading side of bench/values, in its own process: reads every byte of
// a values response (or of every page, following the cursor). Given several
// reads, it runs them in rounds, one of each per round, so that reads
// compared with each other (paged against whole) see the same moments of a
// noisy machine. Round 0 warms up this process and the server and is not
// reported; each later round prints {read, seconds, bytes, pages} per read
// as JSON lines.
// Usage: node client.js '{"reps", "reads": [{"kind":"http"|"grpc"|"h2grpc"|"m4", "url", "path", "headers", "paged"?, "limit"?, "keepAlive"?, "request"?, "width"?}...]}'
// "http" opens a connection per request unless keepAlive, which reuses one.
// "grpc" reads through @grpc/grpc-js; "h2grpc" speaks gRPC over node:http2
// directly (frames counted, not decoded; a 16 MiB flow-control window), so
// it measures the server rather than the client library. "m4" is what a
// client without the chart read does (bench/chart's baseline): the
// whole-range JSON read, parsed, then M4 at `width` in plain TypeScript
// (test/helpers/m4.ts); its "bytes" are the rows it keeps.
import * as grpc from "@grpc/grpc-js";
import { Agent, request } from "node:http";
import * as http2 from "node:http2";
import { m4 } from "../../test/helpers/m4.ts"; // Node strips its types: a test helper, not in dist/

const { reps, reads } = JSON.parse(process.argv[2]);

function get(url, headers, agent) {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers, agent }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`HTTP ${res.statusCode} for ${url}`));
      let bytes = 0;
      let tail = "";
      res.on("data", (chunk) => {
        bytes += chunk.length;
        tail = (tail + chunk.toString("latin1", Math.max(0, chunk.length - 400))).slice(-400);
      });
      res.on("end", () => resolve({ bytes, tail }));
    });
    req.on("error", reject);
    req.end();
  });
}

async function http(spec, agent) {
  let bytes = 0;
  let pages = 0;
  let cursor;
  do {
    const query = spec.paged ? `?limit=${spec.limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}` : "";
    const r = await get(spec.url + spec.path + query, spec.headers, agent);
    bytes += r.bytes;
    pages++;
    cursor = spec.paged ? /"cursor":"([^"]+)"\}$/.exec(r.tail)?.[1] : undefined;
  } while (cursor);
  return { bytes, pages };
}

function grpcRead(spec, client) {
  return new Promise((resolve, reject) => {
    const md = new grpc.Metadata();
    for (const [k, v] of Object.entries(spec.headers)) md.set(k, v);
    let bytes = 0;
    const call = client.makeServerStreamRequest(
      spec.path,
      (b) => b,
      (b) => b,
      Buffer.from(spec.request, "base64"),
      md,
    );
    call.on("data", (b) => (bytes += b.length));
    call.on("error", reject);
    call.on("end", () => resolve({ bytes, pages: 1 }));
  });
}

function h2Read(spec, session) {
  const body = Buffer.from(spec.request, "base64");
  const frame = Buffer.alloc(5 + body.length);
  frame.writeUInt32BE(body.length, 1);
  body.copy(frame, 5);
  return new Promise((resolve, reject) => {
    const stream = session.request({
      ":method": "POST",
      ":path": spec.path,
      "content-type": "application/grpc",
      te: "trailers",
      ...spec.headers,
    });
    let bytes = 0;
    stream.on("data", (c) => (bytes += c.length));
    stream.on("trailers", (t) => t["grpc-status"] !== "0" && reject(new Error(`grpc-status ${t["grpc-status"]}: ${t["grpc-message"]}`)));
    stream.on("end", () => resolve({ bytes, pages: 1 }));
    stream.on("error", reject);
    stream.end(frame);
  });
}

function getText(url, headers) {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`HTTP ${res.statusCode} for ${url}`));
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    });
    req.on("error", reject);
    req.end();
  });
}

async function m4Read(spec) {
  const { data } = JSON.parse(await getText(spec.url + spec.path, spec.headers));
  for (const row of data) row[0] = Date.parse(row[0] + "Z") / 1000;
  const numeric = data[0].slice(1).map((_, c) => spec.numeric[c]);
  const kept = m4(data, numeric, data[0][0], data[data.length - 1][0], spec.width);
  return { bytes: kept.length, pages: 1 };
}

/** A reader per read, with what it keeps open across rounds (a kept-alive agent, an HTTP/2 session, a grpc-js client). */
async function reader(spec) {
  if (spec.kind === "h2grpc") {
    const session = http2.connect(spec.url, { settings: { initialWindowSize: 16 << 20 } });
    await new Promise((resolve) => session.once("remoteSettings", resolve));
    session.setLocalWindowSize(16 << 20);
    return { read: () => h2Read(spec, session), close: () => session.close() };
  }
  if (spec.kind === "grpc") {
    const client = new grpc.Client(new URL(spec.url).host, grpc.credentials.createInsecure(), {
      "grpc.max_receive_message_length": -1,
      "grpc-node.flow_control_window": 16 << 20,
    });
    return { read: () => grpcRead(spec, client), close: () => client.close() };
  }
  if (spec.kind === "m4") return { read: () => m4Read(spec), close: () => {} };
  const agent = spec.keepAlive ? new Agent({ keepAlive: true, maxSockets: 1 }) : false;
  return { read: () => http(spec, agent), close: () => agent && agent.destroy() };
}

const readers = [];
for (const spec of reads) readers.push(await reader(spec));
for (let round = 0; round <= reps; round++) {
  for (const [read, r] of readers.entries()) {
    const t = performance.now();
    const out = await r.read();
    if (round > 0) console.log(JSON.stringify({ read, seconds: (performance.now() - t) / 1000, ...out }));
  }
}
for (const r of readers) r.close();
