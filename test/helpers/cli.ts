// Runs the real `meridian` command (bin/meridian.js over dist/).
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

export const BIN = fileURLToPath(new URL("../../bin/meridian.js", import.meta.url));

export function meridian(args: string[], env: Record<string, string> = {}): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, encoding: "utf8" });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * Starts `meridian serve` and resolves with its URL once it logs that it
 * listens. By plain `node bin/meridian.js` unless asProgram, which runs the
 * file itself, as `meridian serve` and `npm start` do (its first line's flags).
 */
export function serve(env: Record<string, string>, args: string[] = [], asProgram = false): Promise<{ child: ChildProcess; url: string; stderr: () => string }> {
  const [program, argv] = asProgram ? [BIN, ["serve", ...args]] : [process.execPath, [BIN, "serve", ...args]];
  const child = spawn(program, argv, { env: { ...process.env, MERIDIAN_PORT: "0", ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let err = "";
  return new Promise((resolve, reject) => {
    child.stderr!.on("data", (d) => {
      err += d;
      const m = /"address":"([^"]+)"/.exec(err);
      if (m) resolve({ child, url: m[1], stderr: () => err });
    });
    child.once("exit", (code) => reject(new Error(`serve exited with ${code}: ${err}`)));
  });
}

export function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.once("exit", (code) => resolve(code))));
}
