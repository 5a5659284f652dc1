// The single executable's entry (D38): the same CLI as bin/meridian.js.
// release/package.mjs bundles it with everything it imports into one file.
import { main } from "../dist/cli/main.js";

process.exitCode = await main(process.argv.slice(2));
