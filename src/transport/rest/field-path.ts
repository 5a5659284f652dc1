// Field paths of google.api.http rules ("dataset_id", "a.b"), resolved against
// the input message once at start-up, and the JSON assembly they drive.
import { ScalarType, type DescField, type DescMessage, type JsonObject, type JsonValue } from "@bufbuild/protobuf";

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

/**
 * Every query parameter name of a request message, built once per route at
 * start-up as vanguard-go does: each step by JSON name or proto name, ending
 * in a scalar or enum (singular or repeated), through singular messages, and
 * none inside a path the route binds from its path or body. A fixed table:
 * unknown names cost a lookup and are kept nowhere (D51).
 */
export function queryFieldTable(schema: DescMessage, bound: readonly string[]): Map<string, DescField[]> {
  const table = new Map<string, DescField[]>();
  const walk = (msg: DescMessage, names: string[], fields: DescField[], seen: Set<DescMessage>) => {
    for (const field of msg.fields) {
      const path = [...fields, field];
      const key = pathKey(path);
      if (bound.some((b) => key === b || key.startsWith(b + "."))) continue;
      const spellings = new Set([field.jsonName, field.name]);
      const queryable =
        field.fieldKind === "scalar" || field.fieldKind === "enum" || (field.fieldKind === "list" && field.listKind !== "message");
      for (const prefix of names) {
        for (const spelling of spellings) {
          const name = prefix === "" ? spelling : `${prefix}.${spelling}`;
          if (queryable) table.set(name, path);
        }
      }
      if (field.fieldKind === "message" && !seen.has(field.message)) {
        const next = names.flatMap((prefix) => [...spellings].map((sp) => (prefix === "" ? sp : `${prefix}.${sp}`)));
        walk(field.message, next, path, new Set([...seen, field.message]));
      }
    }
  };
  walk(schema, [""], [], new Set([schema]));
  return table;
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
  if (scalar === ScalarType.BOOL) {
    if (text === "true") return true;
    if (text === "false") return false;
  }
  return text;
}

export function pathKey(path: readonly DescField[]): string {
  return path.map((f) => f.jsonName).join(".");
}
