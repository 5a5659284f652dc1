// REST answers show every field: proto3 JSON leaves out an unset optional
// field, but the spec's JSON has `featureId: null`, `cursor: null`. A service
// area may add a rule of its own for a message type (D52: `flags` only on Flag
// fields), applied wherever that type appears. The plan of what to do is
// computed once per message type. One writer serves the server (the service
// registry's): the transcoder's answers and the SSE events are written alike.
import {
  getOption,
  hasOption,
  toJson,
  type DescField,
  type DescMessage,
  type JsonObject,
  type JsonValue,
  type MessageShape,
} from "@bufbuild/protobuf";
import { FeatureSet_FieldPresence } from "@bufbuild/protobuf/wkt";
import { input_only } from "../gen/meridian/api/v1/rest_pb.js";

/** Reshapes the proto3 JSON object of one message in place. */
export type ShapeRule = (json: JsonObject) => void;

interface Plan {
  nullable: string[];
  nested: { key: string; kind: "message" | "list" | "map"; plan: Plan }[];
  rule?: ShapeRule;
}

export class JsonShaper {
  private readonly plans = new WeakMap<DescMessage, Plan>();

  /** `rules` is read when a type is first written: every rule is added before the server serves. */
  constructor(private readonly rules: ReadonlyMap<DescMessage, ShapeRule> = new Map()) {}

  /** A message as REST writes it: its proto3 JSON with implicit fields emitted, shaped. */
  json<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>): JsonValue {
    return this.shape(schema, toJson(schema, message, { alwaysEmitImplicit: true }));
  }

  /** The spec's JSON of a message from its proto3 JSON (with implicit fields emitted), in place. */
  shape(schema: DescMessage, json: JsonValue): JsonValue {
    apply(this.planOf(schema), json);
    return json;
  }

  private planOf(schema: DescMessage): Plan {
    let plan = this.plans.get(schema);
    if (plan) return plan;
    plan = { nullable: [], nested: [], rule: this.rules.get(schema) };
    this.plans.set(schema, plan); // set first: recursive types
    for (const field of schema.fields) this.addField(plan, field);
    return plan;
  }

  private addField(plan: Plan, field: DescField): void {
    const wkt = (m: DescMessage) => m.typeName.startsWith("google.protobuf.");
    if (writtenAsNullWhenUnset(field)) plan.nullable.push(field.jsonName);
    if (field.fieldKind === "message" && !wkt(field.message)) {
      plan.nested.push({ key: field.jsonName, kind: "message", plan: this.planOf(field.message) });
    } else if (field.fieldKind === "list" && field.listKind === "message" && !wkt(field.message)) {
      plan.nested.push({ key: field.jsonName, kind: "list", plan: this.planOf(field.message) });
    } else if (field.fieldKind === "map" && field.mapKind === "message" && !wkt(field.message)) {
      plan.nested.push({ key: field.jsonName, kind: "map", plan: this.planOf(field.message) });
    }
  }
}

/** An optional field: written as null when unset (proto3 JSON would leave it out). */
export function writtenAsNullWhenUnset(field: DescField): boolean {
  return (
    // A field a request may carry and no answer holds (an ignored featureId, D15; D52): left out, not null.
    !(hasOption(field, input_only) && getOption(field, input_only)) &&
    field.oneof === undefined &&
    field.presence === FeatureSet_FieldPresence.EXPLICIT &&
    field.fieldKind !== "list" &&
    field.fieldKind !== "map"
  );
}

/**
 * Whether every answer carries the field (the OpenAPI document requires it,
 * D59): an implicit one is emitted even at its default, an optional one as
 * null; a oneof's member only when set, an input-only one never. A shape rule
 * may still leave a field out (its area's RestDocs says which).
 */
export function alwaysWritten(field: DescField): boolean {
  if (field.oneof !== undefined) return false;
  const implicit = field.presence !== FeatureSet_FieldPresence.EXPLICIT || field.fieldKind === "list" || field.fieldKind === "map";
  return implicit || writtenAsNullWhenUnset(field);
}

function apply(plan: Plan, json: JsonValue): void {
  if (json === null || typeof json !== "object" || Array.isArray(json)) return;
  const obj = json;
  for (const key of plan.nullable) if (!(key in obj)) obj[key] = null;
  for (const n of plan.nested) {
    const v = obj[n.key] as JsonValue | undefined; // a key the answer leaves out
    if (v === undefined || v === null) continue;
    if (n.kind === "message") apply(n.plan, v);
    else if (n.kind === "list" && Array.isArray(v)) for (const item of v) apply(n.plan, item);
    else if (n.kind === "map" && typeof v === "object") for (const item of Object.values(v as JsonObject)) apply(n.plan, item);
  }
  plan.rule?.(obj);
}
