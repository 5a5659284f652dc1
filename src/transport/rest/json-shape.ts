// REST answers show every field: proto3 JSON leaves out an unset optional
// field, but the spec's JSON has `featureId: null`, `cursor: null`. The plan
// of which fields to fill in is computed once per message type.
import type { DescField, DescMessage, JsonObject, JsonValue } from "@bufbuild/protobuf";

const EXPLICIT = 1; // FeatureSet.FieldPresence.EXPLICIT

interface Plan {
  nullable: string[];
  nested: { key: string; kind: "message" | "list" | "map"; plan: Plan }[];
}

const plans = new WeakMap<DescMessage, Plan>();

function planOf(schema: DescMessage): Plan {
  let plan = plans.get(schema);
  if (plan) return plan;
  plan = { nullable: [], nested: [] };
  plans.set(schema, plan); // set first: recursive types
  for (const field of schema.fields) addField(plan, field);
  return plan;
}

function addField(plan: Plan, field: DescField): void {
  const wkt = (m: DescMessage) => m.typeName.startsWith("google.protobuf.");
  if (field.oneof === undefined && field.presence === EXPLICIT && field.fieldKind !== "list" && field.fieldKind !== "map") {
    plan.nullable.push(field.jsonName);
  }
  if (field.fieldKind === "message" && !wkt(field.message)) {
    plan.nested.push({ key: field.jsonName, kind: "message", plan: planOf(field.message) });
  } else if (field.fieldKind === "list" && field.listKind === "message" && !wkt(field.message)) {
    plan.nested.push({ key: field.jsonName, kind: "list", plan: planOf(field.message) });
  } else if (field.fieldKind === "map" && field.mapKind === "message" && !wkt(field.message)) {
    plan.nested.push({ key: field.jsonName, kind: "map", plan: planOf(field.message) });
  }
}

export function fillNulls(schema: DescMessage, json: JsonValue): JsonValue {
  apply(planOf(schema), json);
  return json;
}

function apply(plan: Plan, json: JsonValue): void {
  if (json === null || typeof json !== "object" || Array.isArray(json)) return;
  const obj = json as JsonObject;
  for (const key of plan.nullable) if (!(key in obj)) obj[key] = null;
  for (const n of plan.nested) {
    const v = obj[n.key];
    if (v === undefined || v === null) continue;
    if (n.kind === "message") apply(n.plan, v);
    else if (n.kind === "list" && Array.isArray(v)) for (const item of v) apply(n.plan, item);
    else if (n.kind === "map" && typeof v === "object") for (const item of Object.values(v as JsonObject)) apply(n.plan, item);
  }
}
