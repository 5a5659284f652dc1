#!/usr/bin/env node
// The naive baseline of bench/values: a plain Node server that selects the
// rows of a range from a SQLite table and answers JSON.stringify of them.
// Usage: node naive-server.js DB_FILE  (prints "listening PORT" on stdout)
import Database from "better-sqlite3";
import { createServer } from "node:http";

const db = new Database(process.argv[2], { readonly: true });
const select = db.prepare("SELECT ts, value, flag FROM rows WHERE ts BETWEEN ? AND ? ORDER BY ts");
const pad = (x) => (x < 10 ? "0" + x : "" + x);
const iso = (t) => {
  const d = new Date(t * 1000);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
};

const server = createServer((req, res) => {
  const data = select.all(-62135596800, 253402300799).map((r) => [iso(r.ts), r.value, r.flag]);
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify({ data }));
});
server.listen(0, "127.0.0.1", () => console.log(`listening ${server.address().port}`));
