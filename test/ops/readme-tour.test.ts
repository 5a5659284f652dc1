// D56 (issue 39 item 14): the README's tour as an operator meets it, by copy-pasting. Its ```sh
// blocks (under "A short tour" and "Time series") run in order in one bash -euo pipefail, in the
// checkout as the README says, against a real `meridian serve`: every command must exit 0 (an
// unset $HOOK_ID fails), and what the README shows a command printing (a comment holding JSON,
// the import summary, a header, a status) must be in what it printed, `...` standing for anything.
// Its ```python blocks use no name they do not define (pyarrow and friends may be missing: their
// request runs without them, and must answer Arrow or Parquet).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { exited, serve, type Served } from "../helpers/cli.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const README = readFileSync(join(ROOT, "README.md"), "utf8");
const TOUR_HEADINGS = ["A short tour", "Time series"];

interface Block {
  lang: string;
  /** README.md's line of the block's first line. */
  line: number;
  text: string;
}

/** The fenced blocks in the sections headed by one of `headings`, in order. */
function blocksUnder(markdown: string, headings: string[]): Block[] {
  const blocks: Block[] = [];
  let heading = "";
  let open: Block | undefined;
  markdown.split("\n").forEach((text, i) => {
    const fence = /^```(\w*)\s*$/.exec(text);
    if (open) {
      if (fence && !fence[1]) {
        if (headings.includes(heading)) blocks.push(open);
        open = undefined;
      } else open.text += `${text}\n`;
    } else if (fence) open = { lang: fence[1], line: i + 2, text: "" };
    else if (/^#{1,6} /.test(text)) heading = text.replace(/^#+ /, "").trim();
  });
  return blocks;
}

/**
 * What a block shows a command printing: comments (whole lines, or after a command) that hold
 * JSON, the import summary, a header or a status, up to two spaces (the prose after a sample).
 */
function samplesOf(block: string): string[] {
  const samples: string[] = [];
  for (const line of block.split("\n")) {
    const m = /(?:^|\s)#\s+((?:[{[]|imported into |content-language: |traceresponse: |\d{3}$).*)$/.exec(line);
    if (m) samples.push(m[1].split(/\s{2,}/)[0]);
  }
  return samples;
}

/** Where `sample` (`...`: anything) ends in `output` at or after `from`, or -1. */
function matchSample(output: string, sample: string, from: number): number {
  let at = from;
  for (const part of sample.split("...").filter(Boolean)) {
    const found = output.indexOf(part, at);
    if (found < 0) return -1;
    at = found + part.length;
  }
  return at;
}

/** A block as the test runs it: on the test's server and folder; a stream bounded to 2 s. */
function rewrite(text: string, hostPort: string, dir: string): string {
  return text
    .replaceAll("localhost:8080", hostPort)
    .replaceAll("/tmp/", `${dir}/`)
    .split("\n")
    .map((l) => (l.startsWith("curl -sN ") && !l.endsWith("\\") ? `${l} --max-time 2 || [ $? -eq 28 ]` : l))
    .join("\n");
}

/** The names a Python snippet loads that it neither binds nor imports, nor are builtins. */
const FREE_NAMES = `
import ast, builtins, sys
tree = ast.parse(sys.stdin.read())
bound = set(dir(builtins))
for n in ast.walk(tree):
    if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load): bound.add(n.id)
    elif isinstance(n, (ast.Import, ast.ImportFrom)):
        bound.update((a.asname or a.name).split(".")[0] for a in n.names)
    elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)): bound.add(n.name)
    elif isinstance(n, ast.arg): bound.add(n.arg)
print(" ".join(sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - bound)))
`;

/** A snippet's request alone: its lines up to the urlopen, each import optional; prints the body's first bytes. */
function requestPart(snippet: string, url: string): string {
  const lines = snippet.split("\n");
  const upTo = lines.findIndex((l) => l.includes("urlopen("));
  return [
    ...lines
      .slice(0, upTo + 1)
      .map((l) =>
        /^(import|from) /.test(l) ? `try:\n    ${l}\nexcept ImportError:\n    pass` : l.replaceAll("http://localhost:8080", url),
      ),
    "print(body[:4].hex(), len(body))",
  ].join("\n");
}

describe("D56 the README as written", () => {
  const dir = mkdtempSync(join(tmpdir(), "meridian-readme-"));
  const db = join(dir, "m.db");
  let server: Served;
  beforeAll(async () => {
    server = await serve({ MERIDIAN_DB: db, MERIDIAN_METRICS: "off" });
  });
  afterAll(async () => {
    server?.child.kill("SIGTERM");
    if (server) await exited(server.child);
    rmSync(dir, { recursive: true, force: true });
  });

  it("D56 the README's tour runs as written (issue 39 item 14)", () => {
    const blocks = blocksUnder(README, TOUR_HEADINGS);
    const sh = blocks.filter((b) => b.lang === "sh");
    const python = blocks.filter((b) => b.lang === "python");
    expect(sh.length, "the tour's sh blocks").toBeGreaterThanOrEqual(5);
    expect(python.length, "the tour's python blocks").toBeGreaterThanOrEqual(2);

    // One shell, as a reader pastes block after block; each block's output in a file of its own.
    const hostPort = server.url.replace(/^http:\/\//, "");
    const script = sh
      .map((b, i) => `echo "README.md:${b.line}: block ${i}" >&2\n{\n${rewrite(b.text, hostPort, dir)}\n} > "${dir}/out-${i}"\n`)
      .join("\n");
    // `npx meridian` runs this checkout's bin/meridian.js (checked once below, for real): npm's own
    // resolution re-reads node_modules on every call, seconds each on a loaded machine, so the tour's
    // dozen calls go straight to the command it resolves to.
    const shim = `npx() { if [ "$1" = meridian ]; then shift; node "${join(ROOT, "bin", "meridian.js")}" "$@"; else command npx "$@"; fi; }\n`;
    writeFileSync(join(dir, "tour.sh"), `${shim}${script}\nprintf '%s\\n' "$DS" "$SERIES" "$TS" > "${dir}/vars"\n`);
    const run = spawnSync("bash", ["-euo", "pipefail", join(dir, "tour.sh")], {
      cwd: ROOT,
      env: { ...process.env, MERIDIAN_DB: db },
      encoding: "utf8",
      timeout: 200_000,
    });
    const output = (i: number) => (existsSync(join(dir, `out-${i}`)) ? readFileSync(join(dir, `out-${i}`), "utf8") : "");
    const last = sh.map((_, i) => existsSync(join(dir, `out-${i}`))).lastIndexOf(true);
    expect(run.status, `${run.stderr.split("\n").slice(-15).join("\n")}\n--- stdout of that block:\n${output(last).slice(-2000)}`).toBe(0);

    const mismatches: string[] = [];
    sh.forEach((b, i) => {
      let at = 0;
      for (const sample of samplesOf(b.text)) {
        const end = matchSample(output(i), sample, at);
        if (end < 0) mismatches.push(`README.md block at line ${b.line}: ${sample}\n  printed: ${output(i).slice(at, at + 400)}`);
        else at = end;
      }
    });
    expect(mismatches).toEqual([]);

    const [ds, series, ts] = readFileSync(join(dir, "vars"), "utf8").split("\n");
    for (const b of python) {
      const free = spawnSync("python3", ["-c", FREE_NAMES], { input: b.text, encoding: "utf8" });
      expect(free.status, free.stderr).toBe(0);
      expect(free.stdout.trim(), `undefined names in the python block at README.md line ${b.line}`).toBe("");
      const req = spawnSync("python3", ["-c", requestPart(b.text, server.url)], {
        env: { ...process.env, DS: ds, SERIES: series, TS: ts },
        encoding: "utf8",
        timeout: 30_000,
      });
      expect(req.status, req.stderr).toBe(0);
      // Arrow's IPC stream begins with its continuation marker, a Parquet file with PAR1.
      expect(req.stdout, `the request of the python block at README.md line ${b.line}`).toMatch(/^(ffffffff|50415231) [1-9]\d*\n$/);
    }
  }, 300_000);

  it("D56 npx meridian, as the README writes every command, runs this checkout's command (issue 39 item 14)", () => {
    const r = spawnSync("npx", ["meridian", "--version"], {
      cwd: ROOT,
      encoding: "utf8",
      timeout: 120_000,
      env: { ...process.env, npm_config_offline: "true" },
    });
    expect(r.stdout, r.stderr).toBe(`${JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version as string}\n`);
  }, 150_000);
});
