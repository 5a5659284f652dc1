#!/usr/bin/env node
// The transport's floor for bench/values' Arrow read: a plain node:http server
// that sends `bytes` bytes, made once, in writes of `chunk` bytes, pausing for
// 'drain' as Meridian's answers do. What it costs is node's HTTP, the kernel's
// copying over loopback and curl, nothing of Meridian's.
// Usage: node floor-server.js  (prints "listening PORT"); GET /?bytes=N&chunk=C
import { createServer } from "node:http";

const made = new Map();
async function send(req, res) {
  const q = new URL(req.url, "http://x").searchParams;
  const bytes = Number(q.get("bytes"));
  const chunk = Number(q.get("chunk"));
  let body = made.get(chunk);
  if (!body) made.set(chunk, (body = Buffer.alloc(chunk, 0x5a)));
  res.writeHead(200, { "content-type": "application/octet-stream" });
  for (let sent = 0; sent < bytes; sent += chunk) {
    const part = sent + chunk <= bytes ? body : body.subarray(0, bytes - sent);
    if (!res.write(part) && res.writableLength > 2 * chunk) await new Promise((r) => res.once("drain", r));
  }
  res.end();
}

const server = createServer((req, res) => void send(req, res));
server.listen(0, "127.0.0.1", () => console.log(`listening ${server.address().port}`));
