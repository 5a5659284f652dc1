// Issue 27: src/ stands on five floors (base, domains, backends, transport, app) and an
// import points to its own floor or one below, never up, never round a cycle
// (.dependency-cruiser.cjs). Runs `npm run lint:deps` as CI does: on the tree itself, and on a
// copy of src/ with one import planted against the rule, which it must refuse, naming the file.
// Concurrently: each run is a second or two of CPU, mostly waiting on its own start; on two
// cores shared with other work the runs queue behind one another, hence the longer timeout.
import { afterAll, describe, expect, it } from "vitest";
import { execFile } from "node:child_process";
import { appendFileSync, copyFileSync, cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const root = join(import.meta.dirname, "..", "..");
const lintDeps = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts["lint:deps"];
const copies: string[] = [];
afterAll(() => copies.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** The script's command in `cwd`, with the project's tools on PATH as npm puts them; its exit code and output. */
async function cruise(cwd: string): Promise<{ code: number; output: string }> {
  const env = { ...process.env, PATH: `${join(root, "node_modules", ".bin")}:${process.env.PATH}` };
  try {
    const { stdout, stderr } = await promisify(execFile)("sh", ["-c", lintDeps], { cwd, env });
    return { code: 0, output: stdout + stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, output: err.stdout + err.stderr };
  }
}

/** A copy of src/ and the rule's configuration, with `line` added to `file`. */
function plantedCopy(file: string, line: string): string {
  const dir = mkdtempSync(join(tmpdir(), "meridian-layers-"));
  copies.push(dir);
  cpSync(join(root, "src"), join(dir, "src"), { recursive: true });
  for (const f of [".dependency-cruiser.cjs", "tsconfig.json", "package.json"]) copyFileSync(join(root, f), join(dir, f));
  appendFileSync(join(dir, file), `\n${line}\n`);
  return dir;
}

describe.concurrent("issue 27 layers: an import points to its own floor or one below, never up, no cycles", { timeout: 180_000 }, () => {
  it("issue 27 the tree keeps the layer rule", async () => {
    const { code, output } = await cruise(root);
    expect(output).toContain("no dependency violations found");
    expect(code).toBe(0);
  });

  it("issue 27 a back-import (the kernel importing transport) fails the layer rule, naming the file", async () => {
    const dir = plantedCopy("src/kernel/ids.ts", 'import "../transport/listener.js";');
    const { code, output } = await cruise(dir);
    expect(code).not.toBe(0);
    expect(output).toMatch(/error base-imports-nothing-above: src\/kernel\/ids\.ts → src\/transport\/listener\.ts/);
  });

  it("issue 40 a domain module importing the HTTP floor fails the layer rule, naming the file", async () => {
    const dir = plantedCopy("src/featurestatus/messages/message-writes.ts", 'import type { Outlet } from "../../http/outlet.js";');
    const { code, output } = await cruise(dir);
    expect(code).not.toBe(0);
    expect(output).toMatch(
      /error domains-and-backends-import-no-http: src\/featurestatus\/messages\/message-writes\.ts → src\/http\/outlet\.ts/,
    );
  });

  it("issue 40 a domain module importing a storage adapter's types or the transport's fails the layer rule", async () => {
    const dir = plantedCopy(
      "src/featurestatus/live/change-bus.ts",
      'import type { SqliteMessageStore } from "../../sqlite/message-store.js";\nimport type { Cors } from "../../transport/cors.js";',
    );
    const { code, output } = await cruise(dir);
    expect(code).not.toBe(0);
    expect(output).toMatch(
      /error domains-import-no-backend-transport-or-app: src\/featurestatus\/live\/change-bus\.ts → src\/sqlite\/message-store\.ts/,
    );
    expect(output).toMatch(
      /error domains-import-no-backend-transport-or-app: src\/featurestatus\/live\/change-bus\.ts → src\/transport\/cors\.ts/,
    );
  });

  it("issue 40 the addon's door (src/native/) is on the base floor: importing the domain that uses it fails the layer rule", async () => {
    const dir = plantedCopy("src/native/binding.ts", 'import "../timeseries/value-walk.js";');
    const { code, output } = await cruise(dir);
    expect(code).not.toBe(0);
    expect(output).toMatch(/error base-imports-nothing-above: src\/native\/binding\.ts → src\/timeseries\/value-walk\.ts/);
  });

  it("issue 27 one dialect importing the other fails the layer rule, naming the file", async () => {
    const dir = plantedCopy("src/sqlite/schema.ts", 'import "../postgres/schema.js";');
    const { code, output } = await cruise(dir);
    expect(code).not.toBe(0);
    expect(output).toMatch(/error sqlite-and-postgres-apart: src\/sqlite\/schema\.ts → src\/postgres\/schema\.ts/);
  });
});
