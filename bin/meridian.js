#!/usr/bin/env -S node --initial-old-space-size=64 --max-semi-space-size=2
// The `meridian` command (D33): the compiled CLI, built by `npm install`.
// The flags above are the server's (src/cli/node-flags.ts says why); plain
// `node bin/meridian.js serve` works too, and logs that they are missing.
// The project is imported only once the node is known to be 26 (node-26.js).
import { onNode26 } from "./node-26.js";

if (onNode26()) {
  const { main } = await import("../dist/cli/main.js");
  process.exitCode = await main(process.argv.slice(2));
}
