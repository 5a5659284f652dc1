// Value cursors (D27): where a paged read resumes, sealed with the server's
// key (kept in the database, so cursors survive restarts) and tied to the
// endpoint, dataset and series they were issued for. Each mismatch is its
// own 400, as the spec's error table lists them.
import { createHash } from "node:crypto";
import type { CursorSeal } from "../kernel/cursor-seal.js";
import { invalidField } from "../kernel/errors.js";

export type ValuesEndpoint = "single" | "multi";

/** Resume at series `index` of the request, strictly after timestamp `after` (null: the series has not begun). */
export interface ResumePoint {
  index: number;
  after: number | null;
}

/** What a cursor is issued for: the dataset and the series (one id, or the ordered id list). */
export interface CursorScope {
  endpoint: ValuesEndpoint;
  datasetId: string;
  seriesIds: readonly string[];
}

const BINDING = "values/v1";

type Payload = [endpoint: ValuesEndpoint, dataset: string, series: string, index: number, after: number | null];

/** One id as itself; a list as a digest of its order and content. */
function seriesKey(scope: CursorScope): string {
  if (scope.endpoint === "single") return scope.seriesIds[0];
  return createHash("sha256").update(scope.seriesIds.join(",")).digest().subarray(0, 16).toString("base64url");
}

export function issueCursor(seal: CursorSeal, scope: CursorScope, at: ResumePoint): string {
  const payload: Payload = [scope.endpoint, scope.datasetId, seriesKey(scope), at.index, at.after];
  return seal.seal(BINDING, payload);
}

export function openCursor(seal: CursorSeal, scope: CursorScope, cursor: string): ResumePoint {
  const p = seal.open(BINDING, cursor);
  if (!isPayload(p))
    throw invalidField("cursor", "is malformed, truncated or tampered with (its '#' must be sent URL-encoded, as %23)", "CURSOR_INVALID");
  const [endpoint, dataset, series, index, after] = p;
  if (endpoint !== scope.endpoint)
    throw invalidField(
      "cursor",
      `was issued by the ${endpoint}-series values endpoint; cursors of the two endpoints are not interchangeable`,
    );
  if (dataset !== scope.datasetId) throw invalidField("cursor", "was issued for another dataset", "CURSOR_INVALID");
  if (scope.endpoint === "single") {
    if (series !== seriesKey(scope)) throw invalidField("cursor", "was issued for another time series", "CURSOR_INVALID");
  } else {
    if (index >= scope.seriesIds.length)
      throw invalidField("cursor", "points at a series position outside the requested id list", "CURSOR_INVALID");
    if (series !== seriesKey(scope))
      throw invalidField(
        "timeSeriesIds",
        "differ from the list the cursor was issued for: send the same ids in the same order on every page",
        "CURSOR_INVALID",
      );
  }
  return { index, after };
}

function isPayload(p: unknown): p is Payload {
  return (
    Array.isArray(p) &&
    p.length === 5 &&
    (p[0] === "single" || p[0] === "multi") &&
    typeof p[1] === "string" &&
    typeof p[2] === "string" &&
    Number.isSafeInteger(p[3]) &&
    p[3] >= 0 &&
    (p[4] === null || Number.isSafeInteger(p[4]))
  );
}
