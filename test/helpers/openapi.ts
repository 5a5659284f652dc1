// The OpenAPI document (D41) held to what the server really sends: every
// REST answer the suite's API helpers receive is checked against the schema
// the document gives for its path, method and status (ajv, JSON Schema
// 2020-12 as OpenAPI 3.1 uses it), its required fields included. An answer
// the document does not describe fails the test that received it.
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import type { ValidateFunction } from "ajv";

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;

interface Doc {
  paths: Record<string, Record<string, { responses: Record<string, { $ref?: string; content?: Record<string, unknown> }> }>>;
  components: { responses: Record<string, { content?: Record<string, unknown> }> };
}

interface Checker {
  doc: Doc;
  ajv: Ajv2020;
  routes: { template: string; re: RegExp; variables: number }[];
  compiled: Map<string, ValidateFunction>;
}

const checkers = new Map<string, Promise<Checker>>();

async function checkerFor(baseUrl: string): Promise<Checker> {
  let c = checkers.get(baseUrl);
  if (!c) {
    c = (async () => {
      const doc = (await (await fetch(baseUrl + "/openapi.json")).json()) as Doc;
      const ajv = new Ajv2020({ strict: false, allErrors: true });
      addFormats(ajv);
      ajv.addFormat("int32", true).addFormat("int64", true);
      ajv.addSchema(doc, "openapi");
      const routes = Object.keys(doc.paths).map((template) => ({
        template,
        re: new RegExp("^" + template.replace(/\{[^}]+\}/g, "[^/]+") + "$"),
        variables: (template.match(/\{/g) ?? []).length,
      }));
      return { doc, ajv, routes, compiled: new Map() };
    })();
    checkers.set(baseUrl, c);
  }
  return c;
}

const pointer = (...parts: string[]) => parts.map((p) => p.replaceAll("~", "~0").replaceAll("/", "~1")).join("/");

/** Throws unless the document describes this answer: a JSON body must match the schema of its path, method, status and media type. */
export async function checkAnswer(
  baseUrl: string,
  method: string,
  url: string,
  status: number,
  contentType: string | null,
  body: string,
): Promise<void> {
  const c = await checkerFor(baseUrl);
  const path = new URL(url, baseUrl).pathname;
  const route = c.routes.filter((r) => r.re.test(path)).sort((a, b) => a.variables - b.variables)[0];
  if (!route) return; // not a route of the API (a 404 of the router)
  const op = c.doc.paths[route.template][method.toLowerCase()];
  if (!op) return; // 405: no such method on the path
  const answer = op.responses[String(status)];
  if (!answer) throw new Error(`OpenAPI: ${method} ${route.template} does not document status ${status} (body ${body.slice(0, 300)})`);
  const media = (contentType ?? "").split(";")[0].trim();
  const at = answer.$ref
    ? ["components", "responses", answer.$ref.split("/").pop()!]
    : ["paths", route.template, method.toLowerCase(), "responses", String(status)];
  const described = answer.$ref ? c.doc.components.responses[at[2]] : answer;
  if (!described.content) {
    if (body !== "") throw new Error(`OpenAPI: ${method} ${route.template} ${status} has no body, but one was sent`);
    return;
  }
  if (!(media in described.content)) throw new Error(`OpenAPI: ${method} ${route.template} ${status} is not documented as ${media}`);
  // Only JSON has a schema to check it by: bytes (D64), events and feeds are documented by their media type.
  if (!/^application\/(.+\+)?json$/.test(media)) return;
  const ref = `openapi#/${pointer(...at, "content", media, "schema")}`;
  let validate = c.compiled.get(ref);
  if (!validate) {
    validate = c.ajv.compile({ $ref: ref });
    c.compiled.set(ref, validate);
  }
  if (!validate(JSON.parse(body))) {
    throw new Error(
      `OpenAPI: ${method} ${path} ${status} does not match its schema: ${c.ajv.errorsText(validate.errors)}; body ${body.slice(0, 300)}`,
    );
  }
}
