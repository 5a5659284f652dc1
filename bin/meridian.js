#!/usr/bin/env node
// The `meridian` command (D33): the compiled CLI, built by `npm install`.
import { main } from "../dist/cli/main.js";

process.exitCode = await main(process.argv.slice(2));
