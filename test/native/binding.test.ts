// Issue 40 item 3: the addon's one typed door (src/native/binding.ts). Its export list is the
// one native/src/addon.cc registers (with addon-answers.cc's, which addon.cc's Init adds), name
// for name, and the loaded binding has those keys and no others, each of the kind listed.
import { describe, expect, it } from "vitest";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { EXPORTS, binding } from "../../src/native/binding.js";

const sources = join(import.meta.dirname, "..", "..", "native", "src");

/** The names a unit registers on the addon's exports: exports.Set("name", ...). */
function registered(file: string): string[] {
  const text = readFileSync(join(sources, file), "utf8");
  return [...text.matchAll(/exports\.Set\(\s*"([A-Za-z_$][\w$]*)"/g)].map((m) => m[1]);
}

describe("issue 40 the addon's export list", () => {
  it("issue 40 addon.cc's Init registers its own exports and adds addon-answers.cc's", () => {
    const init = readFileSync(join(sources, "addon.cc"), "utf8");
    expect(init).toMatch(/RegisterAnswerWriters\(env, exports\);/);
    // Every unit that sets exports is one addon.cc names: none registers behind the list's back.
    const setters = readdirSync(sources).filter((f) => f.endsWith(".cc") && registered(f).length > 0);
    expect(setters.sort()).toEqual(["addon-answers.cc", "addon.cc"]);
  });

  it("issue 40 the typed list is exactly the exports the C++ registers", () => {
    const cc = [...registered("addon.cc"), ...registered("addon-answers.cc")];
    expect(new Set(cc).size).toBe(cc.length);
    expect(Object.keys(EXPORTS).sort()).toEqual(cc.sort());
  });

  it("issue 40 the loaded binding has the listed keys, no others, each of its kind", () => {
    expect(Object.keys(binding).sort()).toEqual(Object.keys(EXPORTS).sort());
    for (const [name, kind] of Object.entries(EXPORTS)) expect(typeof binding[name as keyof typeof EXPORTS], name).toBe(kind);
  });
});
