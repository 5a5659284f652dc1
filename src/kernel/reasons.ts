// Every error's stable reason (D59): one table, served in the OpenAPI document
// and listed in the README. A reason is finer than its code (a 404 says which
// thing was not found), never changes meaning once published, and reaches
// every caller: `reason` in problem+json, google.rpc.ErrorInfo over gRPC and
// Connect. An error made without one (Connect's own, before any handler ran)
// has its code's name as its reason, so that every answer names one.
import { Code } from "@connectrpc/connect";

export const ERROR_DOMAIN = "meridian";

interface ReasonSpec {
  code: Code;
  /** The REST status where it is not Connect's for the code. */
  httpStatus?: number;
  description: string;
}

export const REASONS = {
  INVALID_FIELD: {
    code: Code.InvalidArgument,
    description: "a field of the request is invalid; `errors` names each field and what is wrong with it",
  },
  UNKNOWN_FIELD: { code: Code.InvalidArgument, description: "the JSON body holds a field the API does not have; `errors` names it" },
  MALFORMED_BODY: {
    code: Code.InvalidArgument,
    description: "the body is not JSON, not the message the call takes, or not in the coding it says",
  },
  CURSOR_INVALID: { code: Code.InvalidArgument, description: "the cursor is not one this server issued for this listing or read" },
  UNSUPPORTED_MEDIA_TYPE: {
    code: Code.InvalidArgument,
    httpStatus: 415,
    description: "the body's content type or content coding is not accepted",
  },
  NOT_ACCEPTABLE: {
    code: Code.InvalidArgument,
    httpStatus: 406,
    description: "the Accept header allows none of the media types the answer comes in; the detail lists them",
  },
  MALFORMED_REQUEST: {
    code: Code.InvalidArgument,
    description:
      "the request line or a header is not HTTP/1.1, an HTTP/1.1 request names no Host or two, or the path holds what readers " +
      "disagree on: a dot segment, a backslash, an encoded slash, an empty segment (refused before any route: over HTTP/1.1 the connection is closed)",
  },
  REQUEST_HEADERS_TOO_LARGE: {
    code: Code.ResourceExhausted,
    httpStatus: 431,
    description: "the request line and headers together are larger than the server reads (16 KiB)",
  },
  REQUEST_TIMEOUT: {
    code: Code.DeadlineExceeded,
    httpStatus: 408,
    description: "the request's headers or body did not arrive within the server's timeouts",
  },
  BODY_TOO_LARGE: {
    code: Code.ResourceExhausted,
    httpStatus: 413,
    description: "the body is larger than the call accepts (after inflating it)",
  },
  CREDENTIALS_MISSING: { code: Code.Unauthenticated, description: "no API key and no bearer token was sent" },
  CREDENTIALS_INVALID: {
    code: Code.Unauthenticated,
    description: "the API key is not valid or was revoked, or the bearer token is not valid or has expired",
  },
  PERMISSION_DENIED: { code: Code.PermissionDenied, description: "the caller's roles, scopes, projects or features do not allow this" },
  PUBLIC_KEY_NOT_ALLOWED: {
    code: Code.PermissionDenied,
    description: "a public key reads only the active messages and live streams of its features and the global ones; this is something else",
  },
  ORIGIN_NOT_ALLOWED: {
    code: Code.PermissionDenied,
    description: "the public key serves pages of other origins than the request's Origin (or the request has none)",
  },
  ROUTE_NOT_FOUND: { code: Code.NotFound, description: "no route has this path" },
  METHOD_NOT_ALLOWED: {
    code: Code.Unimplemented,
    httpStatus: 405,
    description: "the path exists, but not with this HTTP method; `Allow` lists those that do",
  },
  METHOD_NOT_FOUND: { code: Code.Unimplemented, description: "no RPC has this name" },
  MESSAGE_NOT_FOUND: { code: Code.NotFound, description: "no message has this id in this scope (feature or global)" },
  WEBHOOK_NOT_FOUND: { code: Code.NotFound, description: "no webhook has this id" },
  DATASET_NOT_FOUND: { code: Code.NotFound, description: "no dataset has this id in the caller's project" },
  TIME_SERIES_NOT_FOUND: { code: Code.NotFound, description: "no time series has this id in the dataset" },
  SERVICE_NOT_FOUND: { code: Code.NotFound, description: "the health service knows no service of this name" },
  DATASET_EXISTS: { code: Code.AlreadyExists, description: "a dataset with this id exists" },
  TIME_SERIES_EXISTS: { code: Code.AlreadyExists, description: "a time series with this id exists" },
  ETAG_MISMATCH: {
    code: Code.FailedPrecondition,
    httpStatus: 412,
    description: "If-Match names a version the message no longer has; read it again",
  },
  DISMISSAL_NEEDS_SUBJECT: {
    code: Code.PermissionDenied,
    description: "a dismissal is kept for a person: the caller needs a bearer token with a sub claim (an API key names no person)",
  },
  MESSAGE_NOT_DISMISSIBLE: {
    code: Code.FailedPrecondition,
    httpStatus: 409,
    description: "the message is marked not dismissible (dismissible: false)",
  },
  WRITE_CONFLICT: { code: Code.Aborted, description: "the message kept changing while it was written; retry" },
  MESSAGE_IDS_EXHAUSTED: { code: Code.ResourceExhausted, httpStatus: 507, description: "every message id (up to 2^31-1) has been used" },
  WATCHERS_EXHAUSTED: {
    code: Code.Unavailable,
    description: "this server watches as many streams as it may; retry later or on another replica",
  },
  CLIENT_WATCHERS_EXHAUSTED: {
    code: Code.ResourceExhausted,
    description: "this credential holds as many message streams from this address as it may; close one first",
  },
  SERVER_STOPPING: { code: Code.Unavailable, description: "this server is stopping; reconnect to another replica" },
  DATABASE_UNAVAILABLE: { code: Code.Unavailable, description: "the database is busy or away; retry after Retry-After seconds" },
  NOT_READY: {
    code: Code.Unavailable,
    description: "GET /readyz: the server is starting or draining, or its database does not answer within 1 s",
  },
  CANCELED: { code: Code.Canceled, description: "the client left or cancelled the call" },
  DEADLINE_EXCEEDED: { code: Code.DeadlineExceeded, description: "the call's deadline passed" },
  INTERNAL: { code: Code.Internal, description: "an error of the server's own; it is logged" },
} as const satisfies Record<string, ReasonSpec>;

export type Reason = keyof typeof REASONS;

const CODE_NAMES: Partial<Record<number, string>> = {
  [Code.Canceled]: "canceled",
  [Code.Unknown]: "unknown",
  [Code.InvalidArgument]: "invalid_argument",
  [Code.DeadlineExceeded]: "deadline_exceeded",
  [Code.NotFound]: "not_found",
  [Code.AlreadyExists]: "already_exists",
  [Code.PermissionDenied]: "permission_denied",
  [Code.ResourceExhausted]: "resource_exhausted",
  [Code.FailedPrecondition]: "failed_precondition",
  [Code.Aborted]: "aborted",
  [Code.OutOfRange]: "out_of_range",
  [Code.Unimplemented]: "unimplemented",
  [Code.Internal]: "internal",
  [Code.Unavailable]: "unavailable",
  [Code.DataLoss]: "data_loss",
  [Code.Unauthenticated]: "unauthenticated",
};

/** A Connect code's stable name ("not_found"), as problem details and the metrics give it. */
export function codeName(code: Code | number): string {
  return CODE_NAMES[code] ?? "unknown";
}

/** The reason of an error that was made without one: its code's name, in capitals. */
export function codeReason(code: Code): string {
  return codeName(code).toUpperCase();
}

/** Every reason an answer may carry, in the table's order, then the code names. */
export function allReasons(): string[] {
  const codes = Object.values(Code)
    .filter((c): c is Code => typeof c === "number")
    .map(codeReason);
  return [...new Set([...Object.keys(REASONS), ...codes])];
}
