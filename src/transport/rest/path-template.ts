// Parses google.api.http path templates once, at start-up:
//   Template = "/" Segments ; Segment = "*" | "**" | LITERAL | Variable ;
//   Variable = "{" FieldPath [ "=" Segments ] "}"
// Verbs (":verb") are not used by Meridian's API and are refused rather than
// half supported.

export type Segment = { kind: "literal"; value: string } | { kind: "any" } | { kind: "rest" };

export interface Variable {
  /** Dotted field path as written in the template, e.g. "dataset_id". */
  fieldPath: string;
  /** Segment range [start, end) the variable captures. */
  start: number;
  end: number;
}

export interface PathTemplate {
  source: string;
  segments: Segment[];
  variables: Variable[];
}

export class TemplateError extends Error {}

const literalRe = /^[A-Za-z0-9._~!$&'()+,;=@-]+$/;
const fieldPathRe = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

export function parsePathTemplate(source: string): PathTemplate {
  if (!source.startsWith("/")) throw new TemplateError(`template "${source}" must start with "/"`);
  const segments: Segment[] = [];
  const variables: Variable[] = [];
  const parts = splitTopLevel(source.slice(1), source);
  for (const part of parts) {
    if (part.startsWith("{")) {
      if (!part.endsWith("}")) throw new TemplateError(`unclosed variable in "${source}"`);
      const inner = part.slice(1, -1);
      const eq = inner.indexOf("=");
      const fieldPath = eq < 0 ? inner : inner.slice(0, eq);
      if (!fieldPathRe.test(fieldPath)) throw new TemplateError(`bad field path "${fieldPath}" in "${source}"`);
      if (variables.some((v) => v.fieldPath === fieldPath)) {
        throw new TemplateError(`variable "${fieldPath}" bound twice in "${source}"`);
      }
      const start = segments.length;
      const sub = eq < 0 ? ["*"] : inner.slice(eq + 1).split("/");
      for (const s of sub) {
        if (s.startsWith("{")) throw new TemplateError(`nested variable in "${source}"`);
        segments.push(parseSegment(s, source));
      }
      variables.push({ fieldPath, start, end: segments.length });
    } else {
      segments.push(parseSegment(part, source));
    }
  }
  const restAt = segments.findIndex((s) => s.kind === "rest");
  if (restAt >= 0 && restAt !== segments.length - 1) {
    throw new TemplateError(`"**" must be the last segment in "${source}"`);
  }
  return { source, segments, variables };
}

function parseSegment(s: string, source: string): Segment {
  if (s === "*") return { kind: "any" };
  if (s === "**") return { kind: "rest" };
  if (s.includes(":")) throw new TemplateError(`verbs are not supported ("${source}")`);
  if (!literalRe.test(s)) throw new TemplateError(`bad literal "${s}" in "${source}"`);
  return { kind: "literal", value: s };
}

/** Splits on "/" outside braces. */
function splitTopLevel(s: string, source: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = "";
  for (const ch of s) {
    if (ch === "{") depth++;
    if (ch === "}") depth--;
    if (depth < 0 || depth > 1) throw new TemplateError(`unbalanced braces in "${source}"`);
    if (ch === "/" && depth === 0) {
      out.push(cur);
      cur = "";
    } else cur += ch;
  }
  if (depth !== 0) throw new TemplateError(`unbalanced braces in "${source}"`);
  out.push(cur);
  if (out.some((p) => p === "")) throw new TemplateError(`empty segment in "${source}"`);
  return out;
}

/** The raw segments a variable captured; one ending in "**" takes all that remain. */
export function capturedSegments(template: PathTemplate, v: Pick<Variable, "start" | "end">, segments: readonly string[]): string[] {
  const rest = template.segments[v.end - 1]?.kind === "rest";
  return segments.slice(v.start, rest ? undefined : v.end);
}
