// The REST route table, derived from the google.api.http annotations of the
// served methods at start-up (D5): templates parsed, field paths resolved
// against each input message, everything checked before the first request.
import { getOption, hasOption, type DescField, type DescMethod } from "@bufbuild/protobuf";
import type { MethodImplSpec } from "@connectrpc/connect";
import { http } from "../../gen/google/api/annotations_pb.js";
import type { HttpRule } from "../../gen/google/api/http_pb.js";
import { rest } from "../../gen/meridian/api/v1/rest_pb.js";
import { parsePathTemplate, type PathTemplate } from "./path-template.js";
import { queryFieldTable, resolveFieldPath, pathKey } from "./field-path.js";
import { RouteTrie } from "./route-trie.js";

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024; // D6

export interface RestRoute {
  httpMethod: string;
  template: PathTemplate;
  method: DescMethod;
  /** The implementation, invoked in-process with the router's interceptors. */
  spec: MethodImplSpec;
  /** Where the request body goes: nowhere, the whole message, or one field. */
  body: "none" | "*" | DescField[];
  variables: { fields: DescField[]; start: number; end: number }[];
  /** Field paths set by the path or the body, which query parameters may not set (nor their subfields). */
  bound: string[];
  responseBody?: DescField;
  successStatus: number;
  maxBodyBytes: number;
  /** D69: media types besides JSON the body may be, handed to the method raw (lower case). */
  bodyMediaTypes: readonly string[];
  /** Every query parameter name the route accepts, resolved at start-up (a body of "*" takes none). */
  queryFields: ReadonlyMap<string, DescField[]>;
  /** Server-streaming google.api.HttpBody: the answer is raw bytes, streamed. */
  streamsHttpBody: boolean;
}

export function buildRestRoutes(methods: readonly MethodImplSpec[]): RouteTrie<RestRoute> {
  const trie = new RouteTrie<RestRoute>();
  for (const spec of methods) {
    const method = spec.method;
    if (!hasOption(method, http)) continue;
    const top = getOption(method, http);
    for (const rule of [top, ...top.additionalBindings]) {
      const route = routeOf(spec, method, rule);
      trie.add(route.httpMethod, route.template, route);
    }
  }
  return trie;
}

function routeOf(spec: MethodImplSpec, method: DescMethod, rule: HttpRule): RestRoute {
  const where = `${method.parent.typeName}.${method.name}`;
  const pattern = rule.pattern;
  if (pattern.case === undefined || pattern.case === "custom") throw new Error(`${where}: unsupported http rule`);
  const template = parsePathTemplate(pattern.value);
  const input = method.input;
  const bound: string[] = [];
  const variables = template.variables.map((v) => {
    const fields = resolveFieldPath(input, v.fieldPath);
    const last = fields[fields.length - 1];
    if (last.fieldKind !== "scalar" && last.fieldKind !== "enum")
      throw new Error(`${where}: path variable ${v.fieldPath} must be a scalar`);
    bound.push(pathKey(fields));
    return { fields, start: v.start, end: v.end };
  });
  let body: RestRoute["body"] = "none";
  if (rule.body === "*") body = "*";
  else if (rule.body !== "") {
    body = resolveFieldPath(input, rule.body);
    bound.push(pathKey(body));
  }
  const streamsHttpBody = method.methodKind === "server_streaming" && method.output.typeName === "google.api.HttpBody";
  if (method.methodKind !== "unary" && !streamsHttpBody)
    throw new Error(`${where}: only unary methods and streams of google.api.HttpBody have REST bindings`);
  const responseBody = rule.responseBody ? resolveFieldPath(method.output, rule.responseBody) : undefined;
  if (responseBody && responseBody.length !== 1) throw new Error(`${where}: response_body must name a top-level field`);
  const options = hasOption(method, rest) ? getOption(method, rest) : undefined;
  const isEmpty = method.output.typeName === "google.protobuf.Empty";
  return {
    httpMethod: pattern.case.toUpperCase(),
    template,
    method,
    spec,
    body,
    variables,
    bound,
    responseBody: responseBody?.[0],
    // eslint-disable-next-line @typescript-eslint/prefer-nullish-coalescing -- proto3: an option of 0 is one not set
    successStatus: options?.successStatus || (isEmpty ? 204 : 200),
    maxBodyBytes: maxBodyBytes(method),
    bodyMediaTypes: (options?.bodyMediaTypes ?? []).map((t) => t.toLowerCase()),
    queryFields: body === "*" ? new Map() : queryFieldTable(input, bound),
    streamsHttpBody,
  };
}

/** The largest request body a method accepts, on every protocol (D6): its rest option, else 1 MiB. */
export function maxBodyBytes(method: DescMethod): number {
  const options = hasOption(method, rest) ? getOption(method, rest) : undefined;
  // eslint-disable-next-line @typescript-eslint/prefer-nullish-coalescing -- proto3: an option of 0 is one not set
  return Number(options?.maxBodyBytes || DEFAULT_MAX_BODY_BYTES);
}
