// D52: numbers in series properties and dataset metadata are finite. protobuf-es
// accepts NaN and ±Infinity (JSON "NaN"/"Infinity", or binary doubles), but
// the stored JSON cannot hold them (JSON.stringify writes null) and the JSON
// form of a Struct cannot show them, so they are refused before anything is
// stored; and a row stored before this rule still reads (finiteProperties).
import type { JsonValue } from "@bufbuild/protobuf";
import type { ViolationList } from "../kernel/errors.js";

const NOT_FINITE = "must be a finite number (NaN and ±Infinity are not allowed)";

/** Adds a violation for every property whose value is not a finite number. */
export function checkFiniteProperties(properties: Readonly<Record<string, number>>, v: ViolationList): void {
  for (const [name, value] of Object.entries(properties)) if (!Number.isFinite(value)) v.add(`properties.${name}`, NOT_FINITE);
}

/** Adds a violation for every non-finite number anywhere in a Struct (metadata), named by its path. */
export function checkFiniteStruct(value: JsonValue | undefined, field: string, v: ViolationList): void {
  if (typeof value === "number") {
    if (!Number.isFinite(value)) v.add(field, NOT_FINITE);
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => checkFiniteStruct(item, `${field}[${i}]`, v));
  } else if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) checkFiniteStruct(item, `${field}.${key}`, v);
  }
}

/** The properties a stored row holds that are finite numbers: a null left by an old non-finite write is dropped, not a failed read. */
export function finiteProperties(stored: Readonly<Record<string, unknown>>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, value] of Object.entries(stored)) if (typeof value === "number" && Number.isFinite(value)) out[name] = value;
  return out;
}
