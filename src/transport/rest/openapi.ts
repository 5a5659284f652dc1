// The OpenAPI 3.1 document of the REST paths (D41), derived from the same
// route table the transcoder serves (rest-routes.ts: the google.api.http
// annotations of the protos), with message schemas from the descriptors in
// the JSON the transcoder writes: proto3 JSON with every field present, an
// unset optional one as null (http/json-shape.ts). What the descriptors cannot say
// a service area adds (RestDocs), next to the rules that enforce it: its
// headers, what its fields accept (enums, patterns, bounds, formats), request
// bodies that differ from the message answers carry, the JSON of its streamed
// google.api.HttpBody answers (and the other formats they come in), the
// answer headers its handlers set, and examples. An answer's schema requires
// every field the JSON writer always writes (D59), so a message a request
// sends as well has a request schema of its own (`<name>Input`) requiring
// only what the server refuses a request without.
import { ScalarType, type DescEnum, type DescField, type DescMessage, type DescMethod } from "@bufbuild/protobuf";
import { FeatureSet_FieldPresence } from "@bufbuild/protobuf/wkt";
import { codeToHttpStatus } from "@connectrpc/connect/protocol-connect";
import { Code } from "@connectrpc/connect";
import type { RestRoute } from "./rest-routes.js";
import { REASONS, allReasons } from "../../kernel/reasons.js";
import { alwaysWritten } from "../../http/json-shape.js";

export type Schema = Record<string, unknown>;

export interface Parameter {
  name: string;
  in: "header" | "query" | "path";
  required?: boolean;
  description?: string;
  schema: Schema;
  example?: unknown;
}

/** Examples of one operation, by method name in RestDocs. */
export interface OperationExamples {
  /** The request body. */
  request?: unknown;
  /** The body of the success answer. */
  response?: unknown;
  /** Path, query and header parameters, by name. */
  parameters?: Record<string, unknown>;
}

/** A request body with a schema of its own (a named component), when the body's message as answers write it is not what a request must be. */
export interface RequestBodyDocs {
  /** The component's name. */
  name: string;
  description?: string;
  /** JSON names of the fields a request must send. */
  required?: readonly string[];
}

/** What a service area says about its routes beyond the descriptors. */
export interface RestDocs {
  /** The tag of the service's operations. */
  tag?: { name: string; description: string };
  /**
   * What a field accepts beyond its descriptor, wherever it appears (path,
   * query, body, answer): constraints (enum, pattern, format, bounds, items)
   * join the schema of its value, annotations (description, deprecated,
   * default) stand beside it. Undefined: nothing to add.
   */
  fields?(field: DescField): Schema | undefined;
  /** Request bodies with a schema of their own, by method name. */
  requestBodies?: Record<string, RequestBodyDocs>;
  /** JSON names of the fields a message must carry wherever a request sends it (the server refuses it without), by the message's full name. */
  required?: Record<string, readonly string[]>;
  /** Examples, by method name. */
  examples?: Record<string, OperationExamples>;
  /** Request headers a route of the service takes. */
  headers?(route: RestRoute): Parameter[];
  /** Answers a route may give beyond its success and the shared errors: `problem` ones are problem+json, others have no body. */
  responses?(route: RestRoute): Record<string, { description: string; problem?: boolean }>;
  /** Headers the service's handlers set on a route's answers, by status (the document adds Vary, Location and Retry-After where the transport sends them). */
  answerHeaders?(route: RestRoute): Record<string, readonly AnswerHeader[]>;
  /** JSON names of answer fields a shape rule leaves out at times (D52), by the message's full name: not required. */
  sometimesOmitted?: Record<string, readonly string[]>;
  /**
   * The JSON of a method's streamed google.api.HttpBody answer, by method
   * name; `binary`: the other media types Accept may choose for it (D64),
   * bytes, so that a generated client asks for them and takes the bytes.
   */
  streamedJson?: Record<string, { schema: Schema; description: string; mediaType?: string; binary?: readonly string[] }>;
}

/** The answer headers the document describes, each once (components.headers). */
export type AnswerHeader = keyof typeof ANSWER_HEADERS;

const ANSWER_HEADERS = {
  ETag: {
    description:
      "The entity tag of what was answered: send it in If-Match to write only while it is current (a stale one is a 412 that carries the current one), or in If-None-Match to be answered 304 while it is.",
    schema: { type: "string" },
  },
  Location: { description: "Where the new resource is read (RFC 9110, 15.3.2).", schema: { type: "string" } },
  "Retry-After": { description: "Seconds to wait before asking again.", schema: { type: "integer", minimum: 0 } },
  "Content-Language": {
    description: "The languages the messages answered are in, where one is in a translation; absent when every one is in its default text.",
    schema: { type: "string" },
  },
  Vary: {
    description:
      "What the answer depends on besides the URL (and the credentials, which `Cache-Control: private` covers): Accept-Encoding, and Accept-Language (message reads), Accept (values and chart reads) or Origin (CORS).",
    schema: { type: "string" },
  },
} satisfies Record<string, { description: string; schema: Schema }>;

const headerRefs = (names: Iterable<AnswerHeader>): Schema =>
  Object.fromEntries([...new Set(names)].map((name) => [name, { $ref: `#/components/headers/${name}` }]));

/** Headers the transport sends on an answer of this status: Vary with every content and 304, Retry-After on 429 and 503. */
function transportHeaders(status: number): AnswerHeader[] {
  if (status === 429 || status === 503) return ["Retry-After"];
  return (status < 300 && status !== 204) || status === 304 ? ["Vary"] : [];
}

export interface DocumentInfo {
  title: string;
  version: string;
  description: string;
  license?: { name: string; url?: string; identifier?: string };
}

const API_KEY_HEADER = "svc-open-api-key";
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** The document: every route of `routes`, with `docs` by service type name. */
export function openApiDocument(routes: readonly RestRoute[], docs: ReadonlyMap<string, RestDocs>, info: DocumentInfo): Schema {
  const schemas = new SchemaSet(
    (f) => {
      for (const d of docs.values()) {
        const facts = d.fields?.(f);
        if (facts) return facts;
      }
      return undefined;
    },
    (m) => [...docs.values()].find((d) => d.required?.[m.typeName])?.required?.[m.typeName],
    (m) => [...docs.values()].flatMap((d) => d.sometimesOmitted?.[m.typeName] ?? []),
    answered(routes),
  );
  const paths: Record<string, Record<string, unknown>> = {};
  const tags = new Map<string, string>();
  for (const route of routes) {
    const path = openApiPath(route);
    const serviceDocs = docs.get(route.method.parent.typeName) ?? {};
    if (serviceDocs.tag) tags.set(serviceDocs.tag.name, serviceDocs.tag.description);
    (paths[path] ??= {})[route.httpMethod.toLowerCase()] = operation(route, schemas, serviceDocs, routes);
  }
  return {
    openapi: "3.1.0",
    info,
    // Relative: the server that served this document, whatever name or proxy it was reached by.
    servers: [{ url: "/", description: "the server that served this document" }],
    tags: [...tags].map(([name, description]) => ({ name, description })),
    paths,
    components: {
      schemas: { ...schemas.all(), Problem: PROBLEM },
      responses: Object.fromEntries(ERRORS.map(([status, why]) => [String(status), problemAnswer(status, why)])),
      headers: ANSWER_HEADERS,
      securitySchemes: {
        apiKey: { type: "apiKey", in: "header", name: API_KEY_HEADER, description: "An API key made by `meridian apikey create`." },
        bearer: {
          type: "http",
          scheme: "bearer",
          bearerFormat: "JWT",
          description: "A JWT signed with the server's secret or a key of its JWKS.",
        },
      },
    },
    security: [{ apiKey: [] }, { bearer: [] }],
  };
}

/** The template with each variable as `{field.path}` (a pattern after `=` dropped). */
function openApiPath(route: RestRoute): string {
  return route.template.source.replace(/\{([^}=]+)(=[^}]*)?\}/g, "{$1}");
}

/** The message types some answer carries (their schemas require what is always written; a request sending one has its own). */
function answered(routes: readonly RestRoute[]): Set<string> {
  const out = new Set<string>();
  const walk = (m: DescMessage) => {
    if (out.has(m.typeName)) return;
    out.add(m.typeName);
    for (const f of m.fields) if (f.message) walk(f.message);
  };
  for (const r of routes) {
    if (r.streamsHttpBody) continue;
    if (!r.responseBody) walk(r.method.output);
    else if (r.responseBody.message) walk(r.responseBody.message);
  }
  return out;
}

/** A 201 says where its resource is read when a GET route of its type answers at its path and the new id (the transcoder's rule, D5). */
function hasLocation(route: RestRoute, routes: readonly RestRoute[]): boolean {
  if (route.successStatus !== 201) return false;
  const prefix = openApiPath(route).replace(/\/+$/, "") + "/";
  return routes.some(
    (r) =>
      r.httpMethod === "GET" &&
      r.method.output.typeName === route.method.output.typeName &&
      openApiPath(r).startsWith(prefix) &&
      /^\{[^/}]+\}$/.test(openApiPath(r).slice(prefix.length)),
  );
}

function operation(route: RestRoute, schemas: SchemaSet, docs: RestDocs, routes: readonly RestRoute[]): Schema {
  const method = route.method;
  const examples = docs.examples?.[method.name] ?? {};
  const parameters: Parameter[] = [];
  route.variables.forEach((v, i) => {
    const field = v.fields[v.fields.length - 1];
    parameters.push(parameter(route.template.variables[i].fieldPath, "path", schemas.field(field, false)));
  });
  // One name per field (the query also takes the proto spelling of each, and dotted paths into messages).
  const seen = new Set<DescField[]>();
  for (const [name, fields] of route.queryFields) {
    if (seen.has(fields) || name !== fields.map((f) => f.jsonName).join(".")) continue;
    seen.add(fields);
    const last = fields[fields.length - 1];
    parameters.push(parameter(name, "query", schemas.field(last, false)));
  }
  parameters.push(...(docs.headers?.(route) ?? []), API_VERSION);

  const op: Schema = {
    operationId: method.name,
    tags: [docs.tag?.name ?? method.parent.name],
    summary: `${method.parent.name}.${method.name}`,
    parameters: parameters.map((p) => (examples.parameters?.[p.name] === undefined ? p : { ...p, example: examples.parameters[p.name] })),
    responses: responses(route, schemas, docs, examples, routes),
  };
  if (method.parent.typeName === "grpc.health.v1.Health") op.security = [];
  const body = requestBody(route, schemas, docs, examples);
  if (body) op.requestBody = body;
  return op;
}

/** A parameter, its schema's description as the parameter's own (where readers of parameters look). */
function parameter(name: string, where: "path" | "query", schema: Schema): Parameter {
  const { description, ...rest } = schema;
  const p: Parameter = { name, in: where, schema: rest };
  if (where === "path") p.required = true;
  if (typeof description === "string") p.description = description;
  return p;
}

function requestBody(route: RestRoute, schemas: SchemaSet, docs: RestDocs, examples: OperationExamples): Schema | undefined {
  if (route.body === "none") return undefined;
  // What the path sets is not in the body.
  const bound = new Set(route.variables.map((v) => v.fields[0]));
  const own = docs.requestBodies?.[route.method.name];
  let schema: Schema;
  if (own) {
    const field = route.body === "*" ? undefined : route.body[route.body.length - 1];
    const message = field === undefined ? route.method.input : field.fieldKind === "message" ? field.message : undefined;
    if (!message) throw new Error(`${route.method.name}: a request body of its own needs a message body`);
    schema = ref(schemas.request(own, message, (f) => !bound.has(f)));
  } else if (route.body === "*") {
    // The whole input message, less what the path sets.
    schema = schemas.object(route.method.input, (f) => !bound.has(f), "request");
  } else {
    schema = schemas.field(route.body[route.body.length - 1], false);
  }
  // D69: the columnar media types a body may also be, sent as they are.
  const raw = Object.fromEntries(route.bodyMediaTypes.map((type) => [type, { schema: BINARY }]));
  return { required: true, content: { "application/json": withExample({ schema }, examples.request), ...raw } };
}

function withExample(media: Schema, example: unknown): Schema {
  return example === undefined ? media : { ...media, example };
}

/** A problem+json answer, with the headers the transport sends on its status. */
function problemAnswer(status: number, description: string, also: readonly AnswerHeader[] = []): Schema {
  const headers = [...transportHeaders(status), ...also];
  return {
    description,
    ...(headers.length ? { headers: headerRefs(headers) } : {}),
    content: { "application/problem+json": { schema: ref("Problem") } },
  };
}

const BINARY: Schema = { type: "string", format: "binary" };

function responses(
  route: RestRoute,
  schemas: SchemaSet,
  docs: RestDocs,
  examples: OperationExamples,
  routes: readonly RestRoute[],
): Schema {
  const method = route.method;
  const out: Schema = {};
  const ok = String(route.successStatus);
  const own = docs.answerHeaders?.(route) ?? {};
  const headersOf = (status: number) => {
    const names = [...transportHeaders(status), ...(own[String(status)] ?? [])];
    if (status === route.successStatus && hasLocation(route, routes)) names.push("Location");
    return names.length ? { headers: headerRefs(names) } : {};
  };
  if (route.streamsHttpBody) {
    const streamed = docs.streamedJson?.[method.name];
    out[ok] = {
      description: streamed?.description ?? "streamed",
      ...headersOf(route.successStatus),
      content: {
        [streamed?.mediaType ?? "application/json"]: withExample({ schema: streamed?.schema ?? {} }, examples.response),
        ...Object.fromEntries((streamed?.binary ?? []).map((type) => [type, { schema: BINARY }])),
      },
    };
  } else if (route.successStatus === 204) {
    out[ok] = { description: "done", ...headersOf(204) };
  } else {
    const schema = route.responseBody ? schemas.field(route.responseBody, true, "answer") : ref(schemas.message(method.output, "answer"));
    out[ok] = {
      description: "OK",
      ...headersOf(route.successStatus),
      content: { "application/json": withExample({ schema }, examples.response) },
    };
  }
  for (const [status] of ERRORS) {
    if ((status === 413 || status === 415) && route.body === "none") continue;
    if (status === 409 && route.successStatus !== 201) continue;
    out[String(status)] = { $ref: `#/components/responses/${status}` };
  }
  for (const [status, r] of Object.entries(docs.responses?.(route) ?? {})) {
    out[status] = r.problem
      ? problemAnswer(Number(status), r.description, own[status])
      : { description: r.description, ...headersOf(Number(status)) };
  }
  return out;
}

/** Whether a schema describes what a request sends or what an answer carries. */
type Direction = "request" | "answer";

/** JSON Schemas of messages, named by their full protobuf names (a request's own as `<name>Input` where answers carry the type too). */
class SchemaSet {
  private readonly named = new Map<string, Schema>();

  /**
   * `facts`: what a field accepts beyond its descriptor (RestDocs.fields);
   * `requiredOf`: the fields a request must send (RestDocs.required);
   * `omittedOf`: answer fields a shape rule leaves out at times
   * (RestDocs.sometimesOmitted); `answered`: the types answers carry.
   */
  constructor(
    private readonly facts: (f: DescField) => Schema | undefined,
    private readonly requiredOf: (m: DescMessage) => readonly string[] | undefined = () => undefined,
    private readonly omittedOf: (m: DescMessage) => readonly string[] = () => [],
    private readonly answered: ReadonlySet<string> = new Set(),
  ) {}

  all(): Record<string, Schema> {
    return Object.fromEntries([...this.named].sort(([a], [b]) => a.localeCompare(b)));
  }

  /** Adds a message's schema as `direction` uses it (and those it uses); returns its name. */
  message(m: DescMessage, direction: Direction): string {
    const name = direction === "request" && this.answered.has(m.typeName) ? `${m.typeName}Input` : m.typeName;
    if (!this.named.has(name)) {
      this.named.set(name, {}); // first: recursive types
      const schema = this.object(m, () => true, direction);
      const fields = new Set(m.fields.map((f) => f.jsonName));
      const omitted = this.omittedOf(m);
      for (const n of [...(this.requiredOf(m) ?? []), ...omitted]) if (!fields.has(n)) throw new Error(`${m.typeName} has no field ${n}`);
      // An answer holds every field the writer always writes (D59); a request, what the server refuses it without.
      const required =
        direction === "answer"
          ? m.fields.filter((f) => alwaysWritten(f) && !omitted.includes(f.jsonName)).map((f) => f.jsonName)
          : this.requiredOf(m);
      this.named.set(name, required?.length ? { ...schema, required: [...required] } : schema);
    }
    return name;
  }

  object(m: DescMessage, include: (f: DescField) => boolean, direction: Direction): Schema {
    const properties: Record<string, Schema> = {};
    for (const f of m.fields) if (include(f)) properties[f.jsonName] = this.field(f, true, direction);
    return { type: "object", properties, additionalProperties: false };
  }

  /**
   * A request body's own schema, named `docs.name`: the fields of `m` that
   * `include` admits, each as its value (a field a request leaves unset is
   * absent, not null), `docs.required` required. Returns its name.
   */
  request(docs: RequestBodyDocs, m: DescMessage, include: (f: DescField) => boolean): string {
    const properties: Record<string, Schema> = {};
    for (const f of m.fields) if (include(f)) properties[f.jsonName] = this.field(f, false, "request");
    for (const name of docs.required ?? []) if (!(name in properties)) throw new Error(`${docs.name}: ${m.typeName} has no field ${name}`);
    const schema: Schema = { type: "object" };
    if (docs.description) schema.description = docs.description;
    if (docs.required?.length) schema.required = [...docs.required];
    this.named.set(docs.name, { ...schema, properties, additionalProperties: false });
    return docs.name;
  }

  /** A field's value; `nullable`: an unset optional field is written as null. */
  field(f: DescField, nullable: boolean, direction: Direction = "request"): Schema {
    let schema: Schema;
    switch (f.fieldKind) {
      case "list":
        schema = {
          type: "array",
          items:
            f.listKind === "scalar"
              ? scalar(f.scalar)
              : f.listKind === "enum"
                ? enumSchema(f.enum)
                : this.messageSchema(f.message, direction),
        };
        break;
      case "map":
        schema = {
          type: "object",
          additionalProperties:
            f.mapKind === "scalar"
              ? scalar(f.scalar)
              : f.mapKind === "enum"
                ? enumSchema(f.enum)
                : this.messageSchema(f.message, direction),
        };
        break;
      case "scalar":
        schema = scalar(f.scalar);
        break;
      case "enum":
        schema = enumSchema(f.enum);
        break;
      case "message":
        schema = this.messageSchema(f.message, direction);
    }
    // The area's facts: constraints on the value, annotations beside it (outside the null alternative).
    const { description, deprecated, default: fallback, ...constraints } = this.facts(f) ?? {};
    schema = { ...schema, ...constraints };
    const optional =
      nullable &&
      f.oneof === undefined &&
      f.presence === FeatureSet_FieldPresence.EXPLICIT &&
      f.fieldKind !== "list" &&
      f.fieldKind !== "map";
    const annotations = Object.fromEntries(
      Object.entries({ description, deprecated, default: fallback }).filter(([, v]) => v !== undefined),
    );
    return { ...(optional ? { anyOf: [schema, { type: "null" }] } : schema), ...annotations };
  }

  private messageSchema(m: DescMessage, direction: Direction): Schema {
    return WELL_KNOWN[m.typeName] ?? ref(this.message(m, direction));
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
  description: "2 (the default) or 3. On values reads, 3 selects paging with `limit` and `cursor`.",
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
        Object.entries(REASONS)
          .map(([r, s]) => `- \`${r}\`: ${s.description}`)
          .join("\n"),
    },
    errors: {
      type: "object",
      additionalProperties: { type: "array", items: { type: "string" } },
      description: "per field, what is wrong with it",
    },
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
  [
    codeToHttpStatus(Code.Unavailable),
    "the server cannot answer now (its database is busy or away, it is stopping, or it watches as many streams as it may): retry after `Retry-After` seconds",
  ],
];

/** The methods of `routes` without a route of their own in the document's paths (for a completeness check). */
export function undocumented(doc: Schema, routes: readonly RestRoute[]): DescMethod[] {
  const paths = doc.paths as Record<string, Record<string, unknown> | undefined>;
  return routes.filter((r) => !paths[openApiPath(r)]?.[r.httpMethod.toLowerCase()]).map((r) => r.method);
}
