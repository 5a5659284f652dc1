// Meridian runs on Node 26 (D37, D56). An entry point calls this before it
// imports anything of the project, which an older node would fail on with a
// TypeError or a crash: on an older node this runs the same script on the
// project's own Node 26 (node_modules/node, installed by npm install) when
// there is one, else says in one line that Node 26 is needed. So this file
// uses nothing an old node lacks.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const NEEDED = 26;
const ownNode = fileURLToPath(new URL("../node_modules/node/bin/node", import.meta.url));

/**
 * True when this node is 26 or newer. Otherwise false, and the process ends
 * when the script has run on Node 26 (with its exit code), or at once, having
 * said why; the caller must import nothing more.
 */
export function onNode26() {
  if (Number(process.versions.node.split(".")[0]) >= NEEDED) return true;
  if (!existsSync(ownNode)) {
    process.stderr.write(
      `Meridian needs Node ${NEEDED}; this is Node ${process.version} (${process.execPath}). Install Node ${NEEDED}, or run npm install in the checkout, which brings its own.\n`,
    );
    process.exit(1);
  }
  const child = spawn(ownNode, [...process.execArgv, ...process.argv.slice(1)], { stdio: "inherit" });
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => child.kill(signal));
  child.on("exit", (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal); // end as the child did
      process.kill(process.pid, signal);
    }
    process.exit(code ?? 1);
  });
  return false;
}
