// Starting processes for the benchmarks: Meridian itself (`meridian serve` on
// a free port, a given database) or any server that prints where it listens.
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { SERVE_NODE_FLAGS } from "../dist/cli/node-flags.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Spawns node with args (or another program); resolves once its output (stdout or stderr) matches `ready`, with the first group. */
export function startProcess(args, env, ready, program = process.execPath) {
  const p = spawn(program, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
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

/**
 * `meridian serve` on a free port over dbPath, started as users start it:
 * bin/meridian.js run as a program, so with the node flags of its first line.
 * BENCH_SERVER_ARGS (e.g. "--cpu-prof", not allowed in NODE_OPTIONS) go to
 * node, before those same flags.
 */
export function startMeridian(dbPath) {
  const env = { MERIDIAN_DB: dbPath, MERIDIAN_PORT: "0", MERIDIAN_LOG_LEVEL: "info" };
  const bin = join(root, "bin", "meridian.js");
  const listening = /"address":"([^"]+)"/;
  const nodeArgs = (process.env.BENCH_SERVER_ARGS ?? "").split(" ").filter(Boolean);
  if (nodeArgs.length === 0) return startProcess(["serve"], env, listening, bin);
  return startProcess([...nodeArgs, ...SERVE_NODE_FLAGS, bin, "serve"], env, listening);
}
