// Starting processes for the benchmarks: Meridian itself (`meridian serve` on
// a free port, a given database) or any server that prints where it listens.
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { SERVE_NODE_FLAGS } from "../dist/cli/node-flags.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Spawns node with args; resolves once its output (stdout or stderr) matches `ready`, with the first group. */
export function startProcess(args, env, ready) {
  const p = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  return new Promise((resolve, reject) => {
    let text = "";
    const onData = (d) => {
      text += d;
      const m = ready.exec(text);
      if (!m) return;
      for (const s of [p.stdout, p.stderr]) {
        s.off("data", onData);
        s.resume(); // keep draining (the request log)
      }
      resolve({ process: p, address: m[1] });
    };
    p.stdout.on("data", onData);
    p.stderr.on("data", onData);
    p.once("exit", (c) => reject(new Error(`exited ${c}: ${text}`)));
  });
}

/** Collects the server's own time (durationMs: request in to last byte out) of each request whose log line names `path`, from its request log on stderr. */
export function serverTimes(server, path) {
  const ms = [];
  let partial = "";
  server.process.stderr.on("data", (d) => {
    const lines = (partial + d).split("\n");
    partial = lines.pop();
    for (const line of lines) if (line.includes('"durationMs"') && line.includes(path)) ms.push(JSON.parse(line).durationMs);
  });
  return ms;
}

/**
 * `meridian serve` on a free port over dbPath, with the node flags that
 * bin/meridian.js's first line gives it (SERVE_NODE_FLAGS; a test keeps the
 * two in step). BENCH_SERVER_ARGS (e.g. "--cpu-prof") go to node too.
 */
export function startMeridian(dbPath, env = {}) {
  const nodeArgs = (process.env.BENCH_SERVER_ARGS ?? "").split(" ").filter(Boolean);
  return startProcess(
    [...nodeArgs, ...SERVE_NODE_FLAGS, join(root, "bin", "meridian.js"), "serve"],
    {
      MERIDIAN_DB: dbPath,
      MERIDIAN_PORT: "0",
      MERIDIAN_METRICS: process.env.MERIDIAN_METRICS ?? "127.0.0.1:0",
      MERIDIAN_LOG_LEVEL: "info",
      ...env,
    },
    /"address":"([^"]+)"/,
  );
}
