// Files the server serves as they are (the /docs page's scripts and styles):
// read from the installed package when run by node, from the single
// executable's own assets when run as one file (D38), once each.
import { readFileSync } from "node:fs";
import { getAsset } from "node:sea";
import { inSingleExecutable } from "../native/load.js";

const loaded = new Map<string, Buffer>();

/** The asset `name` of the single executable, or else the file at the path `packagePath()` gives. */
export function assetFile(name: string, packagePath: () => string): Buffer {
  let bytes = loaded.get(name);
  if (!bytes) {
    bytes = inSingleExecutable ? Buffer.from(getAsset(name)) : readFileSync(packagePath());
    loaded.set(name, bytes);
  }
  return bytes;
}
