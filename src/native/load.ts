// Loads a native addon: from the package's files when run by node, from the
// single executable's own assets (through addon-cache.ts) when run as one
// file (D38). The caller names both; nothing else in the code asks which.
import { createRequire } from "node:module";
import { isSea, getAsset } from "node:sea";
import { translate } from "../config/operator-error.js";
import { cachedFile, defaultCacheDir } from "./addon-cache.js";

/** True in the single executable. */
export const inSingleExecutable: boolean = isSea();

/**
 * The addon `asset` of the single executable, or else the one at the path
 * `packagePath()` gives (evaluated only then: under the executable there is
 * no package to find).
 */
export function loadAddon(asset: string, packagePath: () => string): unknown {
  if (!inSingleExecutable) return createRequire(import.meta.url)(packagePath());
  const dir = defaultCacheDir();
  let file: string;
  try {
    file = cachedFile(dir, asset, new Uint8Array(getAsset(asset)));
  } catch (e) {
    // Under whatever step loads it (opening the database, say), the cache is what the operator fixes (issue 39 item 10).
    throw translate(e, "MERIDIAN_CACHE_DIR", dir);
  }
  const module = { exports: {} };
  process.dlopen(module, file);
  return module.exports;
}
