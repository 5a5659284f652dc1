// D61 and D62 as pure rules: which messages a caller and a page see, which
// language an answer takes, and what targeting and language input is refused.
// Through a real server: targeting.test.ts.
import { describe, expect, it } from "vitest";
import { audienceMatches, globProblem, pathMatches, targetList } from "../../src/featurestatus/messages/targeting.js";
import { canonicalTag, chooseLanguage, languageWish } from "../../src/featurestatus/messages/languages.js";
import { ViolationList } from "../../src/kernel/errors.js";

describe("D61 targeting rules", () => {
  it("D61 a message without audiences is for everyone; one with audiences for callers holding one of them", () => {
    expect(audienceMatches([], [])).toBe(true);
    expect(audienceMatches([], ["staff"])).toBe(true);
    expect(audienceMatches(["staff", "beta"], ["beta"])).toBe(true);
    expect(audienceMatches(["staff"], ["beta"])).toBe(false);
    expect(audienceMatches(["staff"], [])).toBe(false);
    expect(audienceMatches(["Staff"], ["staff"])).toBe(false); // names are compared exactly
  });

  it("D61 paths are globs on the page path; no globs, or no path asked, matches", () => {
    expect(pathMatches([], "/anything")).toBe(true);
    expect(pathMatches(["/orders/**"], undefined)).toBe(true);
    expect(pathMatches(["/orders/**"], "/orders")).toBe(true);
    expect(pathMatches(["/orders/**"], "/orders/7/lines")).toBe(true);
    expect(pathMatches(["/orders/*"], "/orders/7/lines")).toBe(false);
    expect(pathMatches(["*/welcome"], "users/welcome")).toBe(true);
    expect(pathMatches(["/help", "/shop/{cart,checkout}"], "/shop/checkout")).toBe(true);
    expect(pathMatches(["/help"], "/helpdesk")).toBe(false);
  });

  it("D61 malformed globs are refused naming the item", () => {
    for (const glob of ["/a/[b", "/a/{b", "/a/(b", "/a/b]", "", "/a\n"]) expect(globProblem(glob), glob).toBeDefined();
    for (const glob of ["/orders/**", "*/welcome", "/x/*.html", "/shop/{a,b}"]) expect(globProblem(glob), glob).toBeUndefined();
    const v = new ViolationList();
    expect(targetList("paths", ["/ok/**", "/bad/[x"], v)).toBeUndefined();
    expect(() => v.throwIfAny()).toThrow(/paths\[1\]/);
  });

  it("D61 at most 50 audiences, each a string; duplicates are stored once", () => {
    const ok = new ViolationList();
    expect(targetList("audiences", ["staff", "beta", "staff"], ok)).toEqual(["staff", "beta"]);
    expect(ok.empty).toBe(true);
    for (const bad of [Array.from({ length: 51 }, (_, i) => `a${i}`), "staff", [1], [" "], [{}]]) {
      const v = new ViolationList();
      expect(targetList("audiences", bad, v)).toBeUndefined();
      expect(() => v.throwIfAny()).toThrow(/audiences/);
    }
    expect(
      targetList(
        "audiences",
        Array.from({ length: 50 }, (_, i) => `a${i}`),
        new ViolationList(),
      ),
    ).toHaveLength(50);
  });
});

describe("D62 language rules", () => {
  it("D62 translation keys are BCP 47 tags, kept in canonical form", () => {
    expect(canonicalTag("de")).toBe("de");
    expect(canonicalTag("de-ch")).toBe("de-CH");
    expect(canonicalTag("zh-hant-tw")).toBe("zh-Hant-TW");
    for (const bad of ["", "de_CH", "x", "germanisch", "de-", "-de", "1234", "de--CH", "a".repeat(65)])
      expect(canonicalTag(bad), bad).toBeUndefined();
  });

  it("D62 Accept-Language chooses by q-value; de-CH falls back to de, then the default", () => {
    const wish = (h: string) => languageWish(undefined, h);
    expect(chooseLanguage(["de", "fr"], wish("fr;q=0.4, de;q=0.9"))).toBe("de");
    expect(chooseLanguage(["de", "fr"], wish("de-CH"))).toBe("de");
    expect(chooseLanguage(["de", "de-CH"], wish("de-CH"))).toBe("de-CH");
    expect(chooseLanguage(["de"], wish("it-CH, it;q=0.8"))).toBeUndefined();
    expect(chooseLanguage(["de"], wish("de;q=0"))).toBeUndefined();
    // Any language (*) is the default text's: no translation picked at random.
    expect(chooseLanguage(["de"], wish("*"))).toBeUndefined();
    expect(chooseLanguage(["de", "fr"], wish("it, *;q=0.5, fr;q=0.1"))).toBe("fr");
    expect(chooseLanguage(["de"], languageWish(undefined, undefined))).toBeUndefined();
    expect(chooseLanguage([], wish("de"))).toBeUndefined();
  });

  it("D62 a lang parameter overrides Accept-Language, with the same fallbacks", () => {
    expect(chooseLanguage(["de", "fr"], languageWish("fr", "de"))).toBe("fr");
    expect(chooseLanguage(["de", "fr"], languageWish("de-CH", "fr"))).toBe("de");
    expect(chooseLanguage(["de", "fr"], languageWish("it", "fr"))).toBeUndefined();
  });
});
