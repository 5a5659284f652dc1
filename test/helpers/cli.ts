// Runs the real `meridian` command: bin/meridian.js over dist/, or, when
// MERIDIAN_TEST_BINARY names one, the single executable (D38), so that the
// black-box tests (those that use this file) run against the binary too.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

export const BIN = fileURLToPath(new URL("../../bin/meridian.js", import.meta.url));
/** The single executable under test, if any. */
export const TEST_BINARY = process.env.MERIDIAN_TEST_BINARY || undefined;

/** Program and leading arguments: node and the script, the script alone (its first line's flags), or the binary. */
function command(asProgram: boolean): [string, string[]] {
  if (TEST_BINARY) return [TEST_BINARY, []];
  return asProgram ? [BIN, []] : [process.execPath, [BIN]];
}

/** Runs the command to its end; `as` gives the working folder or another user to run it as. */
export function meridian(
  args: string[],
  env: Record<string, string> = {},
  as: { cwd?: string; uid?: number; gid?: number } = {},
): { status: number | null; stdout: string; stderr: string } {
  const [program, lead] = command(false);
  const r = spawnSync(program, [...lead, ...args], { env: { ...process.env, ...env }, encoding: "utf8", timeout: 60_000, ...as });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * Why `meridian` cannot run as another user here, or undefined when it can. A clone in a
 * folder others cannot enter (as root: under /root, or a 0700 mktemp -d) holds the
 * project's Node 26 and bin/, which that user then cannot reach.
 */
export function cannotRunAs(user: { uid: number; gid: number }): string | undefined {
  const [program, lead] = command(false);
  const r = spawnSync(program, [...lead, "--version"], { encoding: "utf8", timeout: 30_000, ...user });
  if (r.status === 0) return undefined;
  const why = r.error ? r.error.message : (r.stderr || `exit ${r.status}`).trim().split("\n")[0];
  return `uid ${user.uid} cannot run ${program} (${why}): clone into a folder that user may enter to run these`;
}

/**
 * Starts `meridian serve` and resolves with its URL once it logs that it
 * listens. By plain `node bin/meridian.js` unless asProgram, which runs the
 * file itself, as `meridian serve` and `npm start` do (its first line's flags).
 * A variable set to undefined is left out of the environment.
 */
export function serve(
  env: Record<string, string | undefined>,
  args: string[] = [],
  asProgram = false,
  as: { cwd?: string } = {},
): Promise<Served> {
  const [program, lead] = command(asProgram);
  return startServe(
    program,
    [...lead, "serve", ...args],
    { ...process.env, MERIDIAN_PORT: "0", MERIDIAN_METRICS: "127.0.0.1:0", ...env },
    as,
  );
}

export interface Served {
  child: ChildProcess;
  url: string;
  stderr: () => string;
}

/** Runs `program argv` with exactly `env` and resolves once it logs the address it listens on. */
export function startServe(program: string, argv: string[], env: NodeJS.ProcessEnv, as: { cwd?: string } = {}): Promise<Served> {
  const child = spawn(program, argv, { env, stdio: ["ignore", "pipe", "pipe"], ...as });
  let err = "";
  return new Promise((resolve, reject) => {
    // A server that never says it listens would hang the test until vitest's own timeout, with nothing to read.
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`serve logged no listening line in 20 s: ${err}`));
    }, 20_000);
    child.stderr.on("data", (d: Buffer) => {
      err += d.toString();
      const m = /"address":"([^"]+)"/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1], stderr: () => err });
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}: ${err}`));
    });
  });
}

export function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.once("exit", (code) => resolve(code))));
}
