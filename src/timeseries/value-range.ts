// The range of a value read or delete (D24): both ends inclusive, absent
// ends are the ends of time, and either form of timestamp is accepted.
import { invalidField, ViolationList } from "../kernel/errors.js";
import { MAX_TIMESTAMP, MIN_TIMESTAMP, parseTimestamp } from "../kernel/timestamps.js";

/** An optional query parameter counts as sent when it is non-empty (`?from=` is no from). */
export function sent(v: string | undefined): v is string {
  return v !== undefined && v !== "";
}

/** D24 bounds, both inclusive; absent ends are the ends of time. */
export function rangeOf(fromText: string | undefined, toText: string | undefined): [number, number] {
  const v = new ViolationList();
  const end = (text: string | undefined, field: string, fallback: number) => {
    if (!sent(text)) return fallback;
    const t = parseTimestamp(text);
    if (t === undefined) v.add(field, "must be yyyy-MM-ddTHHmmss or yyyy-MM-ddTHH:mm:ss, optionally with Z, between 0001 and 9999");
    return t ?? fallback;
  };
  const from = end(fromText, "from", MIN_TIMESTAMP);
  const to = end(toText, "to", MAX_TIMESTAMP);
  v.throwIfAny();
  if (from > to) throw invalidField("from", "must not be after to");
  return [from, to];
}
