// The one error type of Meridian is ConnectError: its code decides the gRPC
// status, the Connect error and the REST status (D8), and its google.rpc.ErrorInfo
// detail names a stable reason from one table (reasons.ts, D59). These helpers
// give the common cases one spelling each.
import { Code, ConnectError } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import { BadRequestSchema, BadRequest_FieldViolationSchema, ErrorInfoSchema } from "../gen/google/rpc/error_details_pb.js";
import { ERROR_DOMAIN, REASONS, codeReason, type Reason } from "./reasons.js";

/** An error whose REST status is not Connect's for its code (405, 412, 413, 415, 507). */
export class HttpError extends ConnectError {
  constructor(
    readonly httpStatus: number,
    message: string,
    code: Code,
    headers?: Record<string, string>,
    details?: Detail[],
    cause?: unknown,
  ) {
    super(message, code, headers, details, cause);
  }
}

/** A detail as ConnectError takes it when made: a message and its schema. */
type Detail = Extract<ConnectError["details"][number], { desc: unknown }>;

/** An error of `reason`: its code (and REST status) from the table, the reason in an ErrorInfo detail. */
export function failure(
  reason: Reason,
  message: string,
  opts: { headers?: Record<string, string>; details?: Detail[]; cause?: unknown } = {},
): ConnectError {
  const spec: { code: Code; httpStatus?: number } = REASONS[reason];
  const details = [...(opts.details ?? []), errorInfo(reason)];
  return spec.httpStatus === undefined
    ? new ConnectError(message, spec.code, opts.headers, details, opts.cause)
    : new HttpError(spec.httpStatus, message, spec.code, opts.headers, details, opts.cause);
}

function errorInfo(reason: string): Detail {
  return { desc: ErrorInfoSchema, value: create(ErrorInfoSchema, { reason, domain: ERROR_DOMAIN }) };
}

/** The stable reason of `err`: its ErrorInfo's, or its code's name when it was made without one. */
export function reasonOf(err: ConnectError): string {
  return err.findDetails(ErrorInfoSchema).find((i) => i.domain === ERROR_DOMAIN)?.reason ?? codeReason(err.code);
}

/** `err`, with its reason said in an ErrorInfo if it was made without one (so gRPC and Connect callers read one too). */
export function withReason(err: ConnectError): ConnectError {
  if (!err.findDetails(ErrorInfoSchema).some((i) => i.domain === ERROR_DOMAIN)) err.details.push(errorInfo(codeReason(err.code)));
  return err;
}

/** Field name (as the caller spells it in JSON) to messages. */
export type Violations = Record<string, string[]>;

/** 400 with google.rpc.BadRequest details, which REST turns into `errors` (D8). */
export function invalidArgument(violations: Violations, message?: string, reason: Reason = "INVALID_FIELD"): ConnectError {
  const fields = Object.keys(violations);
  const detail = create(BadRequestSchema, {
    fieldViolations: fields.flatMap((field) =>
      violations[field].map((description) => create(BadRequest_FieldViolationSchema, { field, description })),
    ),
  });
  const text = message ?? fields.map((f) => `${f}: ${violations[f].join("; ")}`).join(". ");
  return failure(reason, text, { details: [{ desc: BadRequestSchema, value: detail }] });
}

/** 400 for one field. */
export function invalidField(field: string, message: string, reason: Reason = "INVALID_FIELD"): ConnectError {
  return invalidArgument({ [field]: [message] }, undefined, reason);
}

export function notFound(message: string, reason: Reason = "ROUTE_NOT_FOUND"): ConnectError {
  return failure(reason, message);
}

export function permissionDenied(message: string): ConnectError {
  return failure("PERMISSION_DENIED", message);
}

/** 401; REST adds WWW-Authenticate from the metadata (D8). */
export function unauthenticated(message: string, reason: Reason = "CREDENTIALS_INVALID"): ConnectError {
  return failure(reason, message, { headers: { "www-authenticate": 'Bearer realm="meridian", ApiKey header="svc-open-api-key"' } });
}

/** Collects violations so that one 400 names every bad field at once. */
export class ViolationList {
  private readonly violations: Violations = {};
  add(field: string, message: string): void {
    (this.violations[field] ??= []).push(message);
  }
  get empty(): boolean {
    return Object.keys(this.violations).length === 0;
  }
  throwIfAny(): void {
    if (!this.empty) throw invalidArgument(this.violations);
  }
}
