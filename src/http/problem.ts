// RFC 9457 problem details for REST callers (D8). gRPC and Connect callers get
// the same ConnectError through their own protocol; this is the REST face of it.
import { Code, ConnectError } from "@connectrpc/connect";
import { codeToHttpStatus } from "@connectrpc/connect/protocol-connect";
import { STATUS_CODES } from "node:http";
import { BadRequestSchema } from "../gen/google/rpc/error_details_pb.js";
import { reasonOf, type Violations } from "../kernel/errors.js";
import { codeName } from "../kernel/reasons.js";

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  /** Stable machine-readable code: the Connect/gRPC code name. */
  code: string;
  /** The stable reason, finer than the code (D59, reasons.ts). */
  reason: string;
  errors?: Violations;
}

export { HttpError } from "../kernel/errors.js";

const HIDDEN = new Set([Code.Internal, Code.Unknown, Code.DataLoss]);

export function httpStatusOf(err: ConnectError): number {
  // Not instanceof: ConnectError's Symbol.hasInstance makes every ConnectError an HttpError.
  const own = (err as { httpStatus?: number }).httpStatus;
  return typeof own === "number" ? own : codeToHttpStatus(err.code);
}

export function problemOf(err: ConnectError): Problem {
  const status = httpStatusOf(err);
  const problem: Problem = {
    type: "about:blank",
    title: STATUS_CODES[status] ?? "Error",
    status,
    // Internal errors never show their cause (D8); it is logged instead. Other 5xx (unavailable,
    // unimplemented, message ids exhausted) are the caller's to read.
    detail: HIDDEN.has(err.code) ? "internal error" : err.rawMessage,
    code: codeName(err.code),
    reason: reasonOf(err),
  };
  const violations = violationsOf(err);
  if (violations) problem.errors = violations;
  return problem;
}

function violationsOf(err: ConnectError): Violations | undefined {
  const badRequest = err.findDetails(BadRequestSchema).at(0);
  if (!badRequest || badRequest.fieldViolations.length === 0) return undefined;
  // A Map, not an object: a field is the caller's name ("constructor", "__proto__"), never a lookup into Object.prototype.
  const out = new Map<string, string[]>();
  for (const v of badRequest.fieldViolations) {
    const list = out.get(v.field);
    if (list) list.push(v.description);
    else out.set(v.field, [v.description]);
  }
  return Object.fromEntries(out); // own properties, whatever their names
}

/** The code name of an answer no ConnectError produced (health, documents, files), by its HTTP status (D59). */
export function codeNameOfStatus(status: number): string {
  if (status < 400) return "ok";
  return httpStatusCodes[status] ?? (status < 500 ? "invalid_argument" : "internal");
}

const httpStatusCodes: Record<number, string> = {
  400: "invalid_argument",
  401: "unauthenticated",
  403: "permission_denied",
  404: "not_found",
  405: "unimplemented",
  408: "deadline_exceeded",
  409: "aborted",
  412: "failed_precondition",
  413: "resource_exhausted",
  429: "resource_exhausted",
  499: "canceled",
  501: "unimplemented",
  503: "unavailable",
  504: "deadline_exceeded",
};
