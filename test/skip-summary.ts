// A vitest reporter: after the run, which tests were skipped, by file, and
// why on this machine (the conditions the suite's skipIf calls test), with
// what runs them. The default reporter alone says only how many.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { relative } from "node:path";
import type { Reporter, TestModule } from "vitest/node";
import { cannotRunAs } from "./helpers/cli.js";

const has = (program: string, ...args: string[]) => spawnSync(program, args, { stdio: "ignore" }).status === 0;

function reasons(): string[] {
  const { version } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string };
  const chromium = [process.env.MERIDIAN_TEST_CHROMIUM, "/usr/bin/chromium", "/usr/bin/chromium-browser"].some((p) => p && existsSync(p));
  const out: string[] = [];
  if (!process.env.MERIDIAN_TEST_PG)
    out.push(
      "the PostgreSQL part: MERIDIAN_TEST_PG is not set; run it with `MERIDIAN_TEST_BACKEND=postgres scripts/with-postgres.sh npx vitest run` (needs postgresql-15)",
    );
  else if (process.env.MERIDIAN_TEST_BACKEND === "postgres")
    out.push("the cases of a SQLite file: the suite runs on PostgreSQL (MERIDIAN_TEST_BACKEND=postgres)");
  if (!process.env.PATRONI_URLS)
    out.push(
      "the Patroni cluster tests (D70 failover, D71 reads from standbys): PATRONI_URLS is not set; run them with `scripts/with-patroni.sh npx vitest run test/scale/failover.test.ts test/scale/read-standbys.test.ts` (needs patroni, etcd-server)",
    );
  if (!has("pgbouncer", "--version")) out.push("the pgbouncer test (D71): no pgbouncer (apt-get install pgbouncer)");
  if (!existsSync(new URL(`../dist/meridian-${version}-linux-x64`, import.meta.url)))
    out.push("the single executable's own tests: it is not built (`npm run package`)");
  if (process.env.MERIDIAN_TEST_BINARY)
    out.push("the cases of bin/meridian.js itself: MERIDIAN_TEST_BINARY runs the single executable instead");
  if (!chromium) out.push("the browser tests: no Chromium (apt-get install chromium, or set MERIDIAN_TEST_CHROMIUM)");
  if (!has("openssl", "version")) out.push("the TLS tests: no openssl to make a certificate");
  const asNobody = process.getuid?.() === 0 ? cannotRunAs({ uid: 65534, gid: 65534 }) : undefined;
  if (asNobody) out.push(`the cases run as nobody (operator-errors.test.ts): ${asNobody}`);
  if (!has("systemd-analyze", "--version")) out.push("the unit's systemd-analyze verify: no systemd-analyze");
  return out;
}

export default class SkipSummary implements Reporter {
  onTestRunEnd(modules: readonly TestModule[]): void {
    const files: string[] = [];
    let total = 0;
    for (const m of modules) {
      const skipped = [...m.children.allTests("skipped")];
      if (skipped.length === 0) continue;
      total += skipped.length;
      // The outermost suites' names: some say their own reason, e.g. "... (no podman)".
      const suites = new Set(skipped.map((t) => t.fullName.split(" > ")[0]).filter((n) => /\(.*\)$/.test(n)));
      files.push(`  ${relative(process.cwd(), m.moduleId)} (${skipped.length})${[...suites].map((n) => `\n      ${n}`).join("")}`);
    }
    if (total === 0) return;
    const why = reasons();
    const lines = [
      `Skipped ${total} test(s), in:`,
      ...files,
      "Why, on this machine:",
      ...(why.length ? why : ["(none of the known conditions holds: see the names above)"]).map((r) => `  - ${r}`),
    ];
    process.stdout.write(`\n${lines.join("\n")}\n`);
  }
}
