// Identifiers callers give us. Feature ids (D18) and project ids (D23) share
// one rule; time series ids are GUIDs (D23).
import { invalidField } from "./errors.js";

export const OPAQUE_ID = /^[A-Za-z0-9._-]{1,128}$/;
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const OPAQUE_ID_RULE = "1 to 128 characters of A-Z a-z 0-9 . _ -";

/** D18 feature ids, D23 project ids. */
export function isOpaqueId(id: string): boolean {
  return OPAQUE_ID.test(id);
}

/** D23: a GUID in any case, returned lower case; anything else is a 400 naming the field. */
export function guid(value: string, field: string): string {
  if (!GUID.test(value)) throw invalidField(field, "must be a GUID");
  return value.toLowerCase();
}
