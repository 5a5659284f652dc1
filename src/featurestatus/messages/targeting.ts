// D61 targeting: whom a message is for (audiences, matched against the
// caller's) and on which pages (globs on the page path, as GitLab's
// target_path). Empty means everyone, every page. Globs are picomatch's: `*`
// within one path segment, `**` across segments, `?`, [classes], {a,b}.
import picomatch from "picomatch";
import { CONTROL_CHARACTER as CONTROL, MAX_AUDIENCES, audienceProblem } from "../../kernel/audiences.js";
import type { ViolationList } from "../../kernel/errors.js";

export const MAX_PATHS = 50;
/** Characters of one glob, and of the path a request names. */
export const GLOB_MAX = 500;
export const PATH_MAX = 2048;

// Unbalanced brackets, braces or parentheses are an error, not literal text:
// a glob that means something other than what was typed is refused.
const GLOB_OPTIONS: picomatch.PicomatchOptions = { dot: true, strictBrackets: true, maxLength: GLOB_MAX };

/** Compiled globs, shared by every listing (globs come from stored messages, so they are few). */
const matchers = new Map<string, (path: string) => boolean>();
const MATCHERS_KEPT = 10_000;

function matcherOf(glob: string): (path: string) => boolean {
  let m = matchers.get(glob);
  if (m === undefined) {
    if (matchers.size >= MATCHERS_KEPT) matchers.clear();
    m = picomatch(glob, GLOB_OPTIONS);
    matchers.set(glob, m);
  }
  return m;
}

/** Why `glob` is not a glob Meridian stores, or undefined when it is one. */
export function globProblem(glob: string): string | undefined {
  if (glob === "") return "must not be empty";
  if (glob.length > GLOB_MAX) return `must be at most ${GLOB_MAX} characters`;
  if (CONTROL.test(glob)) return "must not hold control characters";
  try {
    picomatch.makeRe(glob, GLOB_OPTIONS);
  } catch (e) {
    return `is not a valid glob: ${(e as Error).message}`;
  }
  return undefined;
}

/**
 * A list of targeting values from JSON (`audiences` or `paths` of a write):
 * strings, each valid, at most `max`; duplicates are stored once. Undefined
 * (and violations naming the field, or its item) when it is not one.
 */
export function targetList(field: "audiences" | "paths", json: unknown, v: ViolationList): string[] | undefined {
  if (!Array.isArray(json)) return void v.add(field, "must be an array of strings");
  const max = field === "audiences" ? MAX_AUDIENCES : MAX_PATHS;
  if (json.length > max) return void v.add(field, `must hold at most ${max} items`);
  const problemOf = field === "audiences" ? audienceProblem : globProblem;
  const out: string[] = [];
  let ok = true;
  for (const [i, item] of (json as unknown[]).entries()) {
    const problem = typeof item === "string" ? problemOf(item) : "must be a string";
    if (problem !== undefined) {
      v.add(`${field}[${i}]`, problem);
      ok = false;
    } else if (!out.includes(item as string)) out.push(item as string);
  }
  return ok ? out : undefined;
}

/** Whether a caller with these audiences sees a message for `audiences` (D61: none means everyone). */
export function audienceMatches(audiences: readonly string[], callers: readonly string[]): boolean {
  return audiences.length === 0 || audiences.some((a) => callers.includes(a));
}

/** Whether a message for the pages `globs` is shown on `path` (D61: no globs, or no path asked, means it is). */
export function pathMatches(globs: readonly string[], path: string | undefined): boolean {
  return path === undefined || globs.length === 0 || globs.some((g) => matcherOf(g)(path));
}

/** Why a requested page path cannot be matched, or undefined. */
export function pathProblem(path: string): string | undefined {
  if (path.length > PATH_MAX) return `must be at most ${PATH_MAX} characters`;
  if (CONTROL.test(path)) return "must not hold control characters";
  return undefined;
}
