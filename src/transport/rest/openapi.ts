// The OpenAPI 3.1 document of the REST paths (D41), derived from the same
// route table the transcoder serves (rest-routes.ts: the google.api.http
// annotations of the protos), with message schemas from the descriptors in
// the JSON the transcoder writes: proto3 JSON with every field present, an
// unset optional one as null (json-shape.ts). What the descriptors cannot say
// a service area adds (RestDocs): its headers, and the JSON of its streamed
// google.api.HttpBody answers.
import { ScalarType, type DescEnum, type DescField, type DescMessage, type DescMethod } from "@bufbuild/protobuf";
import { codeToHttpStatus } from "@connectrpc/connect/protocol-connect";
import { Code } from "@connectrpc/connect";
import type { RestRoute } from "./rest-routes.js";
import { REASONS, allReasons } from "../reasons.js";

export type Schema = Record<string, unknown>;

export interface Parameter {
  name: string;
  in: "header" | "query" | "path";
  required?: boolean;
  description?: string;
  schema: Schema;
}

/** What a service area says about its routes beyond the descriptors. */
export interface RestDocs {
  /** Request headers a route of the service takes. */
  headers?(route: RestRoute): Parameter[];
  /** Answers a route may give beyond its success and the shared errors: `problem` ones are problem+json, others have no body. */
  responses?(route: RestRoute): Record<string, { description: string; problem?: boolean }>;
  /** The JSON of a method's streamed google.api.HttpBody answer, by method name. */
  streamedJson?: Record<string, { schema: Schema; description: string; mediaType?: string }>;
}

export interface DocumentInfo {
  title: string;
  version: string;
  description: string;
}

const API_KEY_HEADER = "svc-open-api-key";
const EXPLICIT = 1; // FeatureSet.FieldPresence.EXPLICIT
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** The document: every route of `routes`, with `docs` by service type name. */
export function openApiDocument(routes: readonly RestRoute[], docs: ReadonlyMap<string, RestDocs>, info: DocumentInfo): Schema {
  const schemas = new SchemaSet();
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = openApiPath(route);
    const serviceDocs = docs.get(route.method.parent.typeName) ?? {};
    (paths[path] ??= {})[route.httpMethod.toLowerCase()] = operation(route, schemas, serviceDocs);
  }
  return {
    openapi: "3.1.0",
    info,
    paths,
    components: {
      schemas: { ...schemas.all(), Problem: PROBLEM },
      responses: Object.fromEntries(ERRORS.map(([status, why]) => [String(status), { description: why, content: { "application/problem+json": { schema: ref("Problem") } } }])),
      securitySchemes: {
        apiKey: { type: "apiKey", in: "header", name: API_KEY_HEADER, description: "An API key made by `meridian apikey create` (D11)." },
        bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT", description: "A JWT signed with the server's secret or a key of its JWKS (D12)." },
      },
    },
    security: [{ apiKey: [] }, { bearer: [] }],
  };
}

/** The template with each variable as `{field.path}` (a pattern after `=` dropped). */
function openApiPath(route: RestRoute): string {
  return route.template.source.replace(/\{([^}=]+)(=[^}]*)?\}/g, "{$1}");
}

function operation(route: RestRoute, schemas: SchemaSet, docs: RestDocs): Schema {
  const method = route.method;
  const parameters: Parameter[] = [];
  route.variables.forEach((v, i) => {
    const field = v.fields[v.fields.length - 1];
    parameters.push({ name: route.template.variables[i].fieldPath, in: "path", required: true, schema: schemas.field(field, false) });
  });
  // One name per field (the query also takes the proto spelling of each, and dotted paths into messages).
  const seen = new Set<DescField[]>();
  for (const [name, fields] of route.queryFields) {
    if (seen.has(fields) || name !== fields.map((f) => f.jsonName).join(".")) continue;
    seen.add(fields);
    const last = fields[fields.length - 1];
    parameters.push({ name, in: "query", schema: schemas.field(last, false) });
  }
  parameters.push(...(docs.headers?.(route) ?? []), API_VERSION);

  const op: Schema = {
    operationId: method.name,
    tags: [method.parent.name],
    summary: `${method.parent.name}.${method.name}`,
    parameters,
    responses: responses(route, schemas, docs),
  };
  if (method.parent.typeName === "grpc.health.v1.Health") op.security = [];
  const body = requestBody(route, schemas);
  if (body) op.requestBody = body;
  return op;
}

function requestBody(route: RestRoute, schemas: SchemaSet): Schema | undefined {
  if (route.body === "none") return undefined;
  let schema: Schema;
  if (route.body === "*") {
    // The whole input message, less what the path sets.
    const bound = new Set(route.variables.map((v) => v.fields[0]));
    schemas.message(route.method.input);
    schema = schemas.object(route.method.input, (f) => !bound.has(f));
  } else {
    schema = schemas.field(route.body[route.body.length - 1], false);
  }
  return { required: true, content: { "application/json": { schema } } };
}

function responses(route: RestRoute, schemas: SchemaSet, docs: RestDocs): Schema {
  const method = route.method;
  const out: Schema = {};
  const ok = String(route.successStatus);
  if (route.streamsHttpBody) {
    const streamed = docs.streamedJson?.[method.name];
    out[ok] = { description: streamed?.description ?? "streamed", content: { [streamed?.mediaType ?? "application/json"]: { schema: streamed?.schema ?? {} } } };
  } else if (route.successStatus === 204) {
    out[ok] = { description: "done" };
  } else {
    const schema = route.responseBody ? schemas.field(route.responseBody, true) : ref(schemas.message(method.output));
    out[ok] = { description: "OK", content: { "application/json": { schema } } };
  }
  for (const [status] of ERRORS) {
    if ((status === 413 || status === 415) && route.body === "none") continue;
    if (status === 409 && route.successStatus !== 201) continue;
    out[String(status)] = { $ref: `#/components/responses/${status}` };
  }
  for (const [status, r] of Object.entries(docs.responses?.(route) ?? {})) {
    out[status] = r.problem ? { description: r.description, content: { "application/problem+json": { schema: ref("Problem") } } } : { description: r.description };
  }
  return out;
}

/** JSON Schemas of messages, named by their full protobuf names. */
class SchemaSet {
  private readonly named = new Map<string, Schema>();

  all(): Record<string, Schema> {
    return Object.fromEntries([...this.named].sort(([a], [b]) => a.localeCompare(b)));
  }

  /** Adds a message's schema (and those it uses); returns its name. */
  message(m: DescMessage): string {
    if (!this.named.has(m.typeName)) {
      this.named.set(m.typeName, {}); // first: recursive types
      this.named.set(m.typeName, this.object(m, () => true));
    }
    return m.typeName;
  }

  object(m: DescMessage, include: (f: DescField) => boolean): Schema {
    const properties: Record<string, Schema> = {};
    for (const f of m.fields) if (include(f)) properties[f.jsonName] = this.field(f, true);
    return { type: "object", properties, additionalProperties: false };
  }

  /** A field's value; `nullable`: an unset optional field is written as null. */
  field(f: DescField, nullable: boolean): Schema {
    let schema: Schema;
    switch (f.fieldKind) {
      case "list":
        schema = { type: "array", items: this.single(f.listKind, f.listKind === "scalar" ? f.scalar : undefined, f.listKind === "enum" ? f.enum : undefined, f.listKind === "message" ? f.message : undefined) };
        break;
      case "map":
        schema = { type: "object", additionalProperties: this.single(f.mapKind, f.mapKind === "scalar" ? f.scalar : undefined, f.mapKind === "enum" ? f.enum : undefined, f.mapKind === "message" ? f.message : undefined) };
        break;
      case "scalar":
        schema = scalar(f.scalar);
        break;
      case "enum":
        schema = enumSchema(f.enum);
        break;
      case "message":
        schema = this.single("message", undefined, undefined, f.message);
    }
    const optional = nullable && f.oneof === undefined && f.presence === EXPLICIT && f.fieldKind !== "list" && f.fieldKind !== "map";
    return optional ? { anyOf: [schema, { type: "null" }] } : schema;
  }

  private single(kind: "scalar" | "enum" | "message", s?: ScalarType, e?: DescEnum, m?: DescMessage): Schema {
    if (kind === "scalar") return scalar(s!);
    if (kind === "enum") return enumSchema(e!);
    return WELL_KNOWN[m!.typeName] ?? ref(this.message(m!));
  }
}

function scalar(s: ScalarType): Schema {
  switch (s) {
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return { type: "number" };
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return { type: "integer", format: "int32" };
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return { type: "integer", format: "int32", minimum: 0 };
    case ScalarType.BOOL:
      return { type: "boolean" };
    case ScalarType.STRING:
      return { type: "string" };
    case ScalarType.BYTES:
      return { type: "string", contentEncoding: "base64" };
    default:
      // 64-bit integers: a decimal string in answers (proto3 JSON); a number is accepted too.
      return { type: ["string", "integer"], format: "int64", pattern: "^-?[0-9]+$" };
  }
}

function enumSchema(e: DescEnum): Schema {
  // Answers name the value; requests may also give its number.
  return { anyOf: [{ type: "string", enum: e.values.map((v) => v.name) }, { type: "integer" }] };
}

const WELL_KNOWN: Record<string, Schema> = {
  "google.protobuf.Timestamp": { type: "string", format: "date-time" },
  "google.protobuf.Duration": { type: "string", pattern: "^-?[0-9]+(\\.[0-9]+)?s$" },
  "google.protobuf.Struct": { type: "object" },
  "google.protobuf.Value": {},
  "google.protobuf.ListValue": { type: "array" },
  "google.protobuf.Empty": { type: "object", additionalProperties: false },
  "google.protobuf.FieldMask": { type: "string" },
  "google.protobuf.StringValue": { type: ["string", "null"] },
  "google.protobuf.BoolValue": { type: ["boolean", "null"] },
  "google.protobuf.DoubleValue": { type: ["number", "null"] },
  "google.protobuf.Int32Value": { type: ["integer", "null"] },
};

const API_VERSION: Parameter = {
  name: "api-version",
  in: "header",
  description: "2 (the default) or 3. On values reads, 3 selects paging with `limit` and `cursor` (D9).",
  schema: { type: "string", enum: ["2", "3"] },
};

/** RFC 9457 problem details (D8), as every REST error is written. */
const PROBLEM: Schema = {
  type: "object",
  required: ["type", "title", "status", "detail", "code", "reason"],
  properties: {
    type: { type: "string" },
    title: { type: "string" },
    status: { type: "integer" },
    detail: { type: "string" },
    code: { type: "string", description: "the gRPC/Connect code name, e.g. invalid_argument" },
    reason: {
      type: "string",
      enum: allReasons(),
      description:
        "A stable reason, finer than the code (the same as google.rpc.ErrorInfo's over gRPC and Connect). " +
        "An error the server made without one has its code's name in capitals.\n\n" +
        Object.entries(REASONS).map(([r, s]) => `- \`${r}\`: ${s.description}`).join("\n"),
    },
    errors: { type: "object", additionalProperties: { type: "array", items: { type: "string" } }, description: "per field, what is wrong with it" },
  },
  additionalProperties: false,
};

const ERRORS: [number, string][] = [
  [codeToHttpStatus(Code.InvalidArgument), "the request is malformed or a field is invalid (`errors` names them)"],
  [codeToHttpStatus(Code.Unauthenticated), "no credentials, or credentials that are not valid"],
  [codeToHttpStatus(Code.PermissionDenied), "the credentials do not allow this"],
  [codeToHttpStatus(Code.NotFound), "no such resource (or one the caller may not see)"],
  [codeToHttpStatus(Code.AlreadyExists), "the id is taken"],
  [413, "the body is larger than this route accepts"],
  [415, "the body's content type or content coding is not accepted"],
  [codeToHttpStatus(Code.Unavailable), "the database is busy or away: retry after `Retry-After` seconds"],
];

/** The methods of `routes` without a route of their own in the document's paths (for a completeness check). */
export function undocumented(doc: Schema, routes: readonly RestRoute[]): DescMethod[] {
  const paths = doc.paths as Record<string, Record<string, unknown>>;
  return routes.filter((r) => !paths[openApiPath(r)]?.[r.httpMethod.toLowerCase()]).map((r) => r.method);
}
