// The JSON text of value reads (spec, Part B; D25, D26): rows written by the
// addon straight from the encoded blocks (native/src/value-json.*), framed
// here in the four shapes of the two endpoints, paged or not.
import { blockJson } from "./blocks/native.js";
import type { BlockEncoder, WalkStep } from "./value-walk.js";
import type { ResumePoint } from "./value-cursor.js";

/** Rows of a block as JSON text: `["yyyy-MM-ddTHH:mm:ss",v...]`, comma separated (a leading comma unless first). */
export const jsonRows: BlockEncoder<Buffer> = (payload, from, to, maxRows, first) => {
  const r = blockJson(payload, from, to, maxRows, first);
  return { out: r.text, rows: r.rows, last: r.last, more: r.more };
};

/** JSON Schema of one row: the timestamp, then one value per data field (null: missing). */
const ROW = {
  type: "array",
  prefixItems: [{ type: "string", pattern: "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}$" }],
  minItems: 2,
  items: { type: ["number", "null"] },
};
const ROWS = { type: "array", items: ROW };
const CURSOR = { type: "string", description: "api-version 3: where the next page starts; absent on the last page" };

/** The four shapes below as JSON Schemas (for the OpenAPI document, D41): a series' rows, or one entry per series. */
export const VALUE_JSON_SCHEMAS = {
  single: { type: "object", required: ["data"], properties: { data: ROWS, cursor: CURSOR }, additionalProperties: false },
  multi: {
    type: "object",
    required: ["data"],
    properties: {
      data: {
        type: "array",
        items: {
          anyOf: [ROWS, { type: "object", required: ["timeSeriesId", "values"], properties: { timeSeriesId: { type: "string" }, values: ROWS }, additionalProperties: false }],
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
  steps: AsyncGenerator<WalkStep<Buffer>, ResumePoint | undefined>,
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
