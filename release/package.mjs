#!/usr/bin/env node
// `npm run package` (D38): dist/meridian-<version>-linux-x64, one file that
// runs every command with no node and no node_modules beside it.
//   1. esbuild bundles release/sea-main.mjs (over dist/, built by prepare)
//      and all it imports into one ES module.
//   2. A copy of the project's Node 26 (node_modules/node) is stripped of
//      its symbols: 150 MB of binary becomes about 116.
//   3. node --build-sea writes that binary with the bundle, the server's
//      node flags, and both native addons (ours and better-sqlite3's) as
//      assets, which src/native/load.ts loads through a private cache,
//      and the files of the /docs page (src/runtime/assets.ts serves them),
//      and parquet-wasm's module (D69).
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { SERVE_NODE_FLAGS } from "../dist/cli/node-flags.js";
import { servedAssetFiles } from "../dist/transport/public-files.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const work = join(root, "release", ".work", "sea"); // release/.work/image is npm run image's cached root
const output = join(root, "dist", `meridian-${version}-${process.platform}-${process.arch}`);
const started = performance.now();

if (process.platform !== "linux") throw new Error("npm run package builds for Linux only");
if (Number(process.versions.node.split(".")[0]) < 26)
  throw new Error(`npm run package needs the project's Node 26 (this is ${process.version}); run it through npm`);
const require = createRequire(import.meta.url);
const addons = {
  "meridian_native.node": join(root, "native", "build", "Release", "meridian_native.node"),
  "better_sqlite3.node": betterSqlitePrebuild(),
};
// D69: parquet-wasm's module, which src/timeseries/columnar/parquet-upload.ts compiles from this asset.
const wasmAssets = { "parquet_wasm_bg.wasm": require.resolve("parquet-wasm/esm/parquet_wasm_bg.wasm") };
for (const [name, file] of Object.entries(addons))
  if (!existsSync(file)) throw new Error(`${name}: ${file} is missing; run npm install first`);

rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });

// 1. One ES module. CommonJS dependencies call require() for node's own
// modules; the banner gives them one (createRequire over the executable's
// path, since a single executable's module has no file of its own).
const bundle = join(work, "meridian.mjs");
await build({
  entryPoints: [join(root, "release", "sea-main.mjs")],
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node26",
  outfile: bundle,
  banner: { js: 'import { createRequire as __meridianRequire } from "node:module"; const require = __meridianRequire(process.execPath);' },
  logLevel: "warning",
});

// 2. The runtime, without its symbol tables.
const node = join(work, "node");
execFileSync("strip", ["-o", node, process.execPath]);

// 3. The executable.
const config = join(work, "sea-config.json");
writeFileSync(
  config,
  JSON.stringify(
    {
      main: bundle,
      mainFormat: "module",
      executable: node,
      output,
      disableExperimentalSEAWarning: true,
      execArgv: [...SERVE_NODE_FLAGS],
      assets: { ...addons, ...wasmAssets, ...servedAssetFiles() },
    },
    null,
    2,
  ),
);
mkdirSync(dirname(output), { recursive: true });
execFileSync(process.execPath, ["--build-sea", config], { stdio: "inherit" });
rmSync(work, { recursive: true, force: true });

const mb = (n) => (n / 1024 / 1024).toFixed(1);
console.error(
  `${output}: ${mb(statSync(output).size)} MB (runtime ${mb(statSync(process.execPath).size)} MB before strip), built in ${((performance.now() - started) / 1000).toFixed(1)} s`,
);

/** better-sqlite3's binary: one built from source if there is one, else the prebuilt one it ships. */
function betterSqlitePrebuild() {
  const pkg = dirname(require.resolve("better-sqlite3/package.json"));
  const built = join(pkg, "build", "Release", "better_sqlite3.node");
  return existsSync(built) ? built : join(pkg, "prebuilds", `${process.platform}-${process.arch}.node`);
}
