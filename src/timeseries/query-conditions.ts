// D29 query conditions: AttributeQueryCondition with Equal and the other
// operators; "Item" compares the item name as text, any other name must be a
// property the dataset declares and compares as a number; all must hold.
import type { QueryCondition } from "../gen/meridian/timeseries/v1/time_series_pb.js";
import { ViolationList } from "../kernel/errors.js";
import type { SeriesRecord } from "./metadata-store.js";

/** The operators, as the OpenAPI document lists them (compared case-insensitively). */
export const OPERATORS = [
  "Equal",
  "NotEqual",
  "GreaterThan",
  "LessThan",
  "GreaterThanOrEqual",
  "LessThanOrEqual",
  "Contains",
  "StartsWith",
] as const;
type Operator = (typeof OPERATORS)[number];
/** The one kind of condition (compared case-insensitively). */
export const CONDITION_TYPE = "AttributeQueryCondition";
const TEXT_ONLY: readonly Operator[] = ["Contains", "StartsWith"];

type Test = (s: SeriesRecord) => boolean;

function compare<T extends string | number>(op: Operator, a: T, b: T): boolean {
  switch (op) {
    case "Equal":
      return a === b;
    case "NotEqual":
      return a !== b;
    case "GreaterThan":
      return a > b;
    case "LessThan":
      return a < b;
    case "GreaterThanOrEqual":
      return a >= b;
    case "LessThanOrEqual":
      return a <= b;
    case "Contains":
      return String(a).includes(String(b));
    case "StartsWith":
      return String(a).startsWith(String(b));
  }
}

/** One predicate for all conditions; a 400 names every bad condition. */
export function compileConditions(conditions: readonly QueryCondition[], declared: ReadonlySet<string>): Test {
  const v = new ViolationList();
  const tests: Test[] = [];
  conditions.forEach((c, i) => {
    const at = `conditions[${i}]`;
    if (c.type.toLowerCase() !== CONDITION_TYPE.toLowerCase()) v.add(`${at}.type`, `must be ${CONDITION_TYPE}`);
    const op = OPERATORS.find((o) => o.toLowerCase() === c.operator.toLowerCase());
    if (!op) return v.add(`${at}.operator`, `must be one of ${OPERATORS.join(", ")}`);
    if (c.name === "Item") {
      // An Item's name is a proto string, left out of the stored JSON when empty.
      tests.push((s) => compare(op, typeof s.item.name === "string" ? s.item.name : "", c.value));
      return;
    }
    if (!declared.has(c.name)) return v.add(`${at}.name`, "must be Item or a property declared in the dataset's timeSeriesProperties");
    if (TEXT_ONLY.includes(op)) return v.add(`${at}.operator`, `${op} applies to Item only; properties compare as numbers`);
    const x = c.value.trim() === "" ? NaN : Number(c.value);
    if (!Number.isFinite(x)) return v.add(`${at}.value`, "must be a number for a property");
    // A series without the property matches no condition on it.
    tests.push((s) => c.name in s.properties && compare(op, s.properties[c.name], x));
  });
  v.throwIfAny();
  return (s) => tests.every((t) => t(s));
}
