// The JSON text of value reads (spec, Part B; D25, D26): rows written by the
// addon straight from the encoded blocks (native/src/value-json.*, into pooled
// buffers: columnar/json-rows.ts), framed here in the four shapes of the two
// endpoints, paged or not.
import type { WalkStep } from "./value-walk.js";
import type { ResumePoint } from "./value-cursor.js";
import { QUERY_FORM } from "../kernel/timestamps.js";

/**
 * JSON Schema of a row: the timestamp, then one value per data field (null:
 * missing), 1 to 255 of them. Every cell has the one `items` schema, a
 * timestamp string, a number or null, rather than `prefixItems` for the
 * timestamp and `items` for the values: openapi-typescript types a row with
 * `prefixItems` as the one-element tuple [string] (its issue #1892), and
 * generators that know only `items` lose the row (openapi-python-client). The
 * description says which cell is which.
 */
function rowSchema(timestamp: string, description: string) {
  return {
    type: "array",
    description,
    minItems: 2,
    maxItems: 256,
    items: { oneOf: [{ type: "string", pattern: timestamp }, { type: "number" }, { type: "null" }] },
  };
}
const ROW = rowSchema(
  "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}$",
  "[timestamp, value...]: the timestamp yyyy-MM-ddTHH:mm:ss (UTC), then one value per data field in their order, a number (a Flag's id) or null when missing.",
);
const ROWS = { type: "array", items: ROW };
const CURSOR = { type: "string", description: "api-version 3: where the next page starts; absent on the last page" };

/** The four shapes below as JSON Schemas (for the OpenAPI document, D41): a series' rows, or one entry per series; and the rows of an upload. */
export const VALUE_JSON_SCHEMAS = {
  uploadRows: {
    type: "array",
    items: rowSchema(
      QUERY_FORM.source,
      "[timestamp, value...]: the timestamp yyyy-MM-ddTHH:mm:ss or yyyy-MM-ddTHHmmss, optionally with Z (UTC), then one value per data field in their order, a number (a Flag's id) or null for none.",
    ),
  },
  single: { type: "object", required: ["data"], properties: { data: ROWS, cursor: CURSOR }, additionalProperties: false },
  multi: {
    type: "object",
    required: ["data"],
    properties: {
      data: {
        type: "array",
        items: {
          anyOf: [
            ROWS,
            {
              type: "object",
              required: ["timeSeriesId", "values"],
              properties: { timeSeriesId: { type: "string", format: "uuid" }, values: ROWS },
              additionalProperties: false,
            },
          ],
        },
      },
      cursor: CURSOR,
    },
    additionalProperties: false,
  },
};

export interface JsonShape {
  multi: boolean;
  paged: boolean;
}

/**
 * The response text, in pieces as the walk produces them:
 * single `{"data":[row...]}`, multi `{"data":[[row...]...]}`,
 * paged single `{"data":[row...],"cursor"?}`,
 * paged multi `{"data":[{"timeSeriesId","values":[row...]}...],"cursor"?}`.
 * Framing text is gathered and sent with the next rows, not on its own.
 */
export async function* jsonText(
  steps: AsyncGenerator<WalkStep<Uint8Array>, ResumePoint | undefined>,
  shape: JsonShape,
  cursorFor: (at: ResumePoint) => string,
): AsyncGenerator<Uint8Array> {
  let pending = '{"data":[';
  let entries = 0;
  for (;;) {
    const step = await steps.next();
    if (step.done) {
      pending += "]";
      if (step.value && shape.paged) pending += `,"cursor":${JSON.stringify(cursorFor(step.value))}`;
      yield Buffer.from(pending + "}");
      return;
    }
    const s = step.value;
    if (s.kind === "rows") {
      if (pending !== "") yield Buffer.from(pending);
      pending = "";
      yield s.out;
    } else if (shape.multi) {
      if (s.kind === "begin") pending += (entries++ > 0 ? "," : "") + (shape.paged ? `{"timeSeriesId":"${s.series.id}","values":[` : "[");
      else pending += shape.paged ? "]}" : "]";
    }
  }
}
