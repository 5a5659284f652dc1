// Field paths of google.api.http rules ("dataset_id", "a.b"), resolved against
// the input message once at start-up, and the JSON assembly they drive.
import type { DescField, DescMessage, JsonObject, JsonValue } from "@bufbuild/protobuf";

export class FieldPathError extends Error {}

/** Resolves "a.b.c" by proto name; every step but the last must be a singular message. */
export function resolveFieldPath(schema: DescMessage, path: string): DescField[] {
  const out: DescField[] = [];
  let msg: DescMessage | undefined = schema;
  for (const name of path.split(".")) {
    if (!msg) throw new FieldPathError(`"${path}" walks into a non-message field of ${schema.typeName}`);
    const field: DescField | undefined = msg.fields.find((f) => f.name === name);
    if (!field) throw new FieldPathError(`${msg.typeName} has no field "${name}" (path "${path}")`);
    out.push(field);
    msg = field.fieldKind === "message" ? field.message : undefined;
  }
  return out;
}

/** Resolves a query parameter name, by JSON name or proto name at each step. */
export function lookupQueryField(schema: DescMessage, name: string, cache: Map<string, DescField[] | null>): DescField[] | null {
  const hit = cache.get(name);
  if (hit !== undefined) return hit;
  let msg: DescMessage | undefined = schema;
  const out: DescField[] = [];
  for (const part of name.split(".")) {
    const field: DescField | undefined = msg?.fields.find((f) => f.jsonName === part || f.name === part);
    if (!field) {
      out.length = 0;
      break;
    }
    out.push(field);
    msg = field.fieldKind === "message" ? field.message : undefined;
  }
  const last = out[out.length - 1];
  // Only scalars and enums (singular or repeated) can come from a query string.
  const ok = last && (last.fieldKind === "scalar" || last.fieldKind === "enum" || (last.fieldKind === "list" && last.listKind !== "message"));
  const result = ok ? out : null;
  if (cache.size < 1000) cache.set(name, result);
  return result;
}

/** Sets a value at a field path in a proto3 JSON object, creating parents. */
export function setAtPath(root: JsonObject, path: readonly DescField[], value: JsonValue): void {
  let obj = root;
  for (let i = 0; i < path.length - 1; i++) {
    const key = path[i].jsonName;
    const next = obj[key];
    if (next === null || typeof next !== "object" || Array.isArray(next)) obj[key] = {};
    obj = obj[key] as JsonObject;
  }
  obj[path[path.length - 1].jsonName] = value;
}

/** Path and query text as a proto3 JSON value: JSON accepts numbers as strings, but not booleans. */
export function textToJson(field: DescField, text: string): JsonValue {
  const scalar = field.fieldKind === "scalar" || field.fieldKind === "list" ? field.scalar : undefined;
  if (scalar === 8 /* BOOL */) {
    if (text === "true") return true;
    if (text === "false") return false;
  }
  return text;
}

export function pathKey(path: readonly DescField[]): string {
  return path.map((f) => f.jsonName).join(".");
}
