// Starting processes for the benchmarks: Meridian itself (`meridian serve` on
// a free port, a given database) or any server that prints where it listens.
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

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
 * BENCH_SERVER_ARGS (e.g. "--cpu-prof") go to node through NODE_OPTIONS.
 */
export function startMeridian(dbPath) {
  const env = { MERIDIAN_DB: dbPath, MERIDIAN_PORT: "0", MERIDIAN_LOG_LEVEL: "info" };
  if (process.env.BENCH_SERVER_ARGS) env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ""} ${process.env.BENCH_SERVER_ARGS}`;
  return startProcess(["serve"], env, /"address":"([^"]+)"/, join(root, "bin", "meridian.js"));
}
