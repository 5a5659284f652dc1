// The one error type of Meridian is ConnectError: its code decides the gRPC
// status, the Connect error and the REST status (D8). These helpers give the
// common cases one spelling each.
import { Code, ConnectError } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import { BadRequestSchema, BadRequest_FieldViolationSchema } from "../gen/google/rpc/error_details_pb.js";

/** Field name (as the caller spells it in JSON) to messages. */
export type Violations = Record<string, string[]>;

/** 400 with google.rpc.BadRequest details, which REST turns into `errors` (D8). */
export function invalidArgument(violations: Violations, message?: string): ConnectError {
  const fields = Object.keys(violations);
  const detail = create(BadRequestSchema, {
    fieldViolations: fields.flatMap((field) =>
      violations[field].map((description) => create(BadRequest_FieldViolationSchema, { field, description })),
    ),
  });
  const text = message ?? fields.map((f) => `${f}: ${violations[f].join("; ")}`).join(". ");
  return new ConnectError(text, Code.InvalidArgument, undefined, [{ desc: BadRequestSchema, value: detail }]);
}

/** 400 for one field. */
export function invalidField(field: string, message: string): ConnectError {
  return invalidArgument({ [field]: [message] });
}

export function notFound(message: string): ConnectError {
  return new ConnectError(message, Code.NotFound);
}

export function permissionDenied(message: string): ConnectError {
  return new ConnectError(message, Code.PermissionDenied);
}

/** 401; REST adds WWW-Authenticate from the metadata (D8). */
export function unauthenticated(message: string): ConnectError {
  return new ConnectError(message, Code.Unauthenticated, {
    "www-authenticate": 'Bearer realm="meridian", ApiKey header="svc-open-api-key"',
  });
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
