// W3C Trace Context (D45): a request's trace is the caller's when it sends a
// valid `traceparent`, else a new one; its id goes in the request's log line,
// and the answer names it in `traceresponse` (Trace Context Level 2) with
// the span this server made, so a caller without tracing of its own can
// still quote the id of a request it is asking about.
import { parseTraceParent } from "@opentelemetry/core";
import { randomFillSync } from "node:crypto";

export interface RequestTrace {
  traceId: string;
  /** This server's span of the trace. */
  spanId: string;
  /** The caller's span, when it sent one. */
  parentId?: string;
  /** The traceresponse header's value. */
  header: string;
}

/** The trace of a request with this traceparent header (absent, or malformed: a new trace). */
export function traceOf(traceparent: string | string[] | undefined): RequestTrace {
  const parent = typeof traceparent === "string" ? parseTraceParent(traceparent.trim()) : null;
  const traceId = parent?.traceId ?? nonZeroHex(16);
  const spanId = nonZeroHex(8);
  const flags = (parent?.traceFlags ?? 0).toString(16).padStart(2, "0");
  return { traceId, spanId, parentId: parent?.spanId, header: `00-${traceId}-${spanId}-${flags}` };
}

/**
 * Random bytes drawn a pool at a time: randomBytes(8) and (16) for every
 * request were a getrandom call each, 5% of the CPU of a small request
 * (bench/ingest's floor case). Trace ids need to be unique, not secret.
 */
const POOL = Buffer.alloc(4096);
let used = POOL.length;

/** Random bytes as lower-case hex, never all zeros (an invalid id in the specification). */
function nonZeroHex(bytes: number): string {
  for (;;) {
    if (used + bytes > POOL.length) {
      randomFillSync(POOL);
      used = 0;
    }
    const hex = POOL.toString("hex", used, (used += bytes));
    if (/[^0]/.test(hex)) return hex;
  }
}
