// REST transcoding in the manner of vanguard-go: match the path in the trie,
// then build the input message from the body first, then path variables,
// then query parameters; invoke the method's implementation with the router's
// own interceptors (auth, api-version, errors: the same as for gRPC and
// Connect) and turn its answer into the spec's JSON, or its error into
// problem+json (D8). The call stays in-process as message objects: no
// protobuf binary round trip on the REST path.
import { fromJson, ScalarType, type DescField, type DescMessage, type JsonObject, type JsonValue, type Message } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createHandlerContext,
  type ContextValues,
  type HandlerContext,
  type Interceptor,
  type MethodImplSpec,
} from "@connectrpc/connect";
import { createAsyncIterable, invokeUnaryImplementation, transformInvokeImplementation } from "@connectrpc/connect/protocol";
import type { HttpBody } from "../../gen/google/api/httpbody_pb.js";
import { codeName } from "../../kernel/reasons.js";
import { failure, invalidField } from "../../kernel/errors.js";
import { writeHead, type NodeRequest, type NodeResponse } from "../../http/node-types.js";
import { codingFor, compress, compressor, MIN_COMPRESSED_BYTES, pipeFreeing, type Coding } from "../compression.js";
import { PRIVATE, closeIfBodyPending, isRead, readBody, sendJsonText, sendProblem, varyAlso } from "../http-io.js";
import { JSON_CONTENT_TYPE, PARQUET_MEDIA_TYPE, isJsonMediaType } from "../../http/media-types.js";
import { jsonInputError, rejectUnknownFields } from "../json-input.js";
import { buildRestRoutes, type RestRoute } from "./rest-routes.js";
import { pathKey, setAtPath, textToJson } from "./field-path.js";
import type { JsonShaper } from "../../http/json-shape.js";
import type { MatchResult, RouteTrie } from "./route-trie.js";
import { capturedSegments } from "./path-template.js";
import { exchangeKey } from "../exchange.js";
import { WriteAhead } from "../write-ahead.js";
import { ChunksInFlight } from "../../native/buffer-pool.js";
import { uploadBodyKey } from "../../kernel/upload-body.js";

/** Bytes of a streamed answer that may wait in its compressor, or in the response when sent as it is, while the next chunk is made (D28, D44). */
const AHEAD = 1 << 20;

/** Where a streamed answer's chunks go once its head is sent: the socket, or a compressor before it. */
interface Sink {
  write(chunk: Uint8Array): Promise<void>;
  end(): Promise<void> | void;
}

export interface TranscoderOptions {
  /** The router's interceptors, in its order. */
  interceptors: readonly Interceptor[];
  /** Aborts calls in flight when the server stops. */
  shutdownSignal?: AbortSignal;
  /** The REST JSON writer (the service registry's, with its D52 rules). */
  json: JsonShaper;
}

/** A request's URL and the route it matched (or why none did). */
export interface Resolved {
  url: URL;
  match: MatchResult<RestRoute>;
}

/**
 * Why a finished call's signal is aborted. One shared reason: aborting
 * without one makes a DOMException, whose stack capture cost about 20 µs a
 * request for nothing anyone reads.
 */
const CALL_ENDED = new ConnectError("the call has ended", Code.Canceled);

/** Request headers that describe the REST exchange itself, not the call. */
const hopHeaders = new Set([
  "content-type",
  "content-length",
  "content-encoding",
  "accept-encoding",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "te",
  "upgrade",
  "host",
]);

export class Transcoder {
  private readonly trie: RouteTrie<RestRoute>;
  /** JSON text of answers a service hands out more than once (from its own cache): serialised once. */
  private readonly jsonOf = new WeakMap<Message, string>();
  /** Connect's invoke functions take a mutable array; one copy made here serves every call. */
  private readonly interceptors: Interceptor[];

  constructor(
    methods: readonly MethodImplSpec[],
    private readonly options: TranscoderOptions,
  ) {
    this.trie = buildRestRoutes(methods);
    this.interceptors = [...options.interceptors];
  }

  /** Every REST route served (the OpenAPI document describes them). */
  get routes(): readonly RestRoute[] {
    return this.trie.all;
  }

  /** Matches a request; exported for the route table test. */
  match(method: string, pathname: string) {
    return this.trie.match(method, splitPath(pathname));
  }

  /** The route of a request, found before anything reads its body (credentials are checked in between). */
  resolve(req: NodeRequest): Resolved {
    let url: URL;
    try {
      url = new URL(req.url ?? "/", "http://localhost");
    } catch {
      return { url: new URL("http://localhost/"), match: { kind: "not-found" } };
    }
    return { url, match: this.match(req.method ?? "GET", url.pathname) };
  }

  async serve(req: NodeRequest, res: NodeResponse, contextValues: ContextValues, resolved = this.resolve(req)): Promise<void> {
    try {
      const { url, match } = resolved;
      if (match.kind === "not-found") throw failure("ROUTE_NOT_FOUND", `no route for ${url.pathname}`);
      if (match.kind === "method-not-allowed") {
        throw failure("METHOD_NOT_ALLOWED", `${req.method} is not allowed on ${url.pathname}`, {
          headers: { allow: match.allowed.join(", ") },
        });
      }
      const route = match.route;
      const input = await this.buildInput(route, req, url, match.segments, contextValues);
      await this.invoke(route, input, req, res, contextValues, url);
    } catch (e) {
      if (res.headersSent) return void res.destroy();
      closeIfBodyPending(req, res); // refused before its body was all read: do not read the rest
      const err = ConnectError.from(e);
      contextValues.get(exchangeKey)?.settle(codeName(err.code)); // the metrics' outcome (D59), also for what no interceptor saw
      sendProblem(res, err);
    }
  }

  private async buildInput(route: RestRoute, req: NodeRequest, url: URL, segments: string[], values: ContextValues): Promise<Message> {
    const json: JsonObject = {};
    // 1. Body. (Kept, with its type, to name a field protobuf-es refuses without naming it.)
    let sent: { schema: DescMessage; json: JsonValue } | undefined;
    const rawType = mediaTypeOf(req.headers["content-type"]);
    if (route.body !== "none" && rawType !== undefined && route.bodyMediaTypes.includes(rawType)) {
      // D69: a columnar body goes to the method as it came; the message holds the path's fields.
      values.set(uploadBodyKey, { mediaType: rawType, bytes: await readBody(req, route.maxBodyBytes) });
    } else if (route.body !== "none") {
      const text = await readJsonBody(req, route.maxBodyBytes, route.bodyMediaTypes);
      if (text !== undefined) {
        let parsed: JsonValue;
        try {
          parsed = JSON.parse(text) as JsonValue;
        } catch (e) {
          throw invalidField("body", `malformed JSON: ${(e as Error).message}`, "MALFORMED_BODY");
        }
        if (route.body === "*") {
          if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed))
            throw invalidField("body", "must be a JSON object", "MALFORMED_BODY");
          rejectUnknownFields(route.method.input, parsed);
          Object.assign(json, parsed);
          sent = { schema: route.method.input, json: parsed };
        } else {
          const bodyField = route.body[route.body.length - 1];
          rejectUnknownFields(route.method.input, parsed, bodyField);
          setAtPath(json, route.body, parsed);
          if (bodyField.fieldKind === "message") sent = { schema: bodyField.message, json: parsed };
        }
      }
    } else {
      req.resume(); // a body where none is bound is ignored
    }
    // 2. Path variables.
    for (const v of route.variables) {
      let text: string;
      try {
        text = capturedSegments(route.template, v, segments).map(decodeURIComponent).join("/");
      } catch {
        throw invalidField(pathKey(v.fields), "malformed percent-encoding in the path");
      }
      const field = v.fields[v.fields.length - 1];
      // An id in a path names one resource one way: JSON's number forms (0x1, +1, 1e0, 01) are not ids.
      if (isInteger(field) && !DECIMAL.test(text))
        throw invalidField(pathKey(v.fields), "must be a decimal integer without sign or leading zeros");
      setAtPath(json, v.fields, textToJson(field, text));
    }
    // 3. Query parameters, for fields neither the body nor the path set.
    if (route.body !== "*") {
      const repeated = new Map<string, JsonValue[]>();
      for (const [name, value] of url.searchParams) {
        // Unknown parameters, and those of fields the path or body sets, are ignored, like unknown JSON fields (D6).
        const fields = route.queryFields.get(name);
        if (!fields) continue;
        const key = pathKey(fields);
        const last = fields[fields.length - 1];
        // D21: a number is its decimal digits; JSON's other forms (0x2, 2e0, +2, 02) are not what was meant.
        if (isInteger(last) && !SIGNED_DECIMAL.test(value)) throw invalidField(key, "must be a decimal integer");
        const v = textToJson(last, value);
        if (last.fieldKind === "list") {
          let arr = repeated.get(key);
          if (!arr) {
            repeated.set(key, (arr = []));
            setAtPath(json, fields, arr);
          }
          arr.push(v);
        } else {
          setAtPath(json, fields, v);
        }
      }
    }
    try {
      return fromJson(route.method.input, json, { ignoreUnknownFields: true });
    } catch (e) {
      throw jsonInputError(e, sent?.schema, sent?.json);
    }
  }

  private async invoke(
    route: RestRoute,
    input: Message,
    req: NodeRequest,
    res: NodeResponse,
    contextValues: ContextValues,
    url: URL,
  ): Promise<void> {
    // A plain record: createHandlerContext builds the one Headers object from it.
    const requestHeader: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) {
      if (v === undefined || k.startsWith(":") || hopHeaders.has(k)) continue;
      requestHeader[k] = Array.isArray(v) ? v.join(", ") : v;
    }
    const abort = new AbortController();
    const onClose = () => abort.abort(new ConnectError("client closed the connection", Code.Canceled));
    res.once("close", onClose);
    const ctx = createHandlerContext({
      service: route.method.parent,
      method: route.method,
      protocolName: "rest",
      requestMethod: req.method ?? "GET",
      url: req.url ?? "/",
      requestHeader,
      contextValues,
      requestSignal: abort.signal,
      shutdownSignal: this.options.shutdownSignal,
    });
    try {
      if (route.spec.kind !== "unary") {
        await this.writeStream(route, ctx, input, res, codingFor(req), req.method === "HEAD");
        return;
      }
      const output = await invokeUnaryImplementation(route.spec, ctx, input, this.interceptors);
      const headers = passHeaders(ctx.responseHeader);
      const location = route.successStatus === 201 ? this.locationOf(route, url.pathname, output) : undefined;
      if (location) headers.location = location;
      if (isRead(req) && notModified(req.headers["if-none-match"], ctx.responseHeader.get("etag"))) {
        // D47: the caller has this answer already (RFC 9110, 13.1.2: weak comparison).
        writeHead(res, 304, { ...headers, vary: varyOf(res, ctx) });
        res.end();
        return;
      }
      if (route.successStatus === 204) {
        writeHead(res, 204, headers);
        res.end();
        return;
      }
      const text = this.toJsonText(route, output);
      const coding = codingFor(req);
      if (coding && text.length >= MIN_COMPRESSED_BYTES) {
        const body = await compress(coding, Buffer.from(text));
        writeHead(res, route.successStatus, {
          ...headers,
          vary: varyOf(res, ctx),
          "content-type": JSON_CONTENT_TYPE,
          "content-encoding": coding,
          "content-length": String(body.length),
        });
        res.end(body);
        return;
      }
      sendJsonText(res, route.successStatus, text, { ...headers, vary: varyOf(res, ctx) });
    } finally {
      res.off("close", onClose);
      ctx.abort(CALL_ENDED); // ends the call's signal: work tied to it stops
    }
  }

  /**
   * Where a 201's new resource is read (RFC 9110, 15.3.2): the request's path
   * and the answer's id, when a GET route answers there with the same type.
   * None where no GET reads it by id over REST.
   */
  private locationOf(route: RestRoute, pathname: string, output: Message): string | undefined {
    const id = (output as { id?: unknown }).id;
    if ((typeof id !== "string" && typeof id !== "number") || id === "") return undefined;
    const path = `${pathname.replace(/\/+$/, "")}/${encodeURIComponent(String(id))}`;
    const match = this.match("GET", path);
    return match.kind === "found" && match.route.method.output.typeName === route.method.output.typeName ? path : undefined;
  }

  private toJsonText(route: RestRoute, output: Message): string {
    let text = this.jsonOf.get(output);
    if (text === undefined) {
      let json = this.options.json.json(route.method.output, output);
      if (route.responseBody) json = (json as JsonObject)[route.responseBody.jsonName] ?? null;
      text = JSON.stringify(json);
      this.jsonOf.set(output, text);
    }
    return text;
  }

  /**
   * Streams google.api.HttpBody messages as raw bytes, pausing while the
   * socket is full (so memory does not grow with the response, D28) and
   * stopping the implementation when the client goes away. An error before
   * the first byte is a problem+json; after it, a cut stream. A HEAD stops
   * once the first chunk has fixed the head: its walk goes no further (D51).
   */
  private async writeStream(
    route: RestRoute,
    ctx: HandlerContext,
    input: Message,
    res: NodeResponse,
    coding: Coding | undefined,
    headOnly: boolean,
  ): Promise<void> {
    const stream = transformInvokeImplementation(route.spec, ctx, this.interceptors)(createAsyncIterable([input]));
    const exchange = ctx.values.get(exchangeKey);
    // Compressed as it goes (D44): the compressor takes the chunks and pipe() gives its output to
    // the socket at the socket's pace, so memory still does not grow with the answer (D28).
    const socket = res as NodeJS.WritableStream;
    // The pooled chunks (D28) handed out and not yet written: each back to its pool once written,
    // and whatever is still out when the response closes (the client gone mid-answer) let go then.
    const inFlight = new ChunksInFlight();
    res.once("close", () => inFlight.close());
    /** Sends the head; returns how each chunk is written, and how the answer ends. */
    const start = (contentType: string): Sink => {
      // Server-Sent Events are sent as they come: a compressor would hold them back (D46).
      const events = contentType.startsWith("text/event-stream");
      if (events) coding = undefined;
      // A Parquet file's pages are zstd already (D64): compressing it again gains under 2% of its bytes (W1).
      if (contentType === PARQUET_MEDIA_TYPE) coding = undefined;
      const encoding: Record<string, string> = coding ? { "content-encoding": coding } : {};
      // A handler that chose its answer's format by Accept (D64) or its language (D62) says so in Vary.
      writeHead(res, route.successStatus, {
        ...passHeaders(ctx.responseHeader),
        vary: varyOf(res, ctx),
        ...encoding,
        "content-type": contentType || JSON_CONTENT_TYPE,
      });
      if (!coding || headOnly) {
        // No lead for events: a watcher whose client does not read waits here, where the server's stop finds and cuts it (D57).
        const ahead = events ? 0 : AHEAD;
        // The socket's own pace: after a refused write, wait for 'drain', which comes once the
        // response's queue is empty. A pooled chunk (D28) goes back to its pool by its write's
        // callback (inFlight.sent), which the response calls once its socket has written the chunk
        // (HTTP/1: with the chunk's closing CRLF, node's _http_outgoing), never before.
        return {
          write: async (chunk) => {
            // A lead of AHEAD bytes, as for a compressor: waiting for 'drain' after every chunk
            // larger than the socket's high-water mark (a 16,536-row block as Arrow is 265 KB) left the
            // socket idle while the next chunk was made.
            if (!socket.write(chunk, inFlight.sent(chunk)) && res.writableLength > ahead && !res.destroyed) await drainOrClose(res);
          },
          end: () => {
            socket.end();
          },
        };
      }
      const z = compressor(coding);
      pipeFreeing(z, socket);
      // A lead of AHEAD bytes: the next chunk is made while one is compressed.
      const writer = new WriteAhead(z, () => res.destroyed, AHEAD);
      res.once("close", () => {
        z.destroy();
        writer.wake();
      });
      return {
        write: (chunk) => writer.write(chunk, inFlight.sent(chunk)),
        end: async () => {
          await writer.settled(); // one frame: see WriteAhead.settled
          z.end();
        },
      };
    };
    let sink: Sink | undefined; // once the head is sent
    let sent = 0;
    try {
      for await (const chunk of stream as AsyncIterable<HttpBody>) {
        if (res.destroyed) {
          inFlight.unsent(chunk.data); // the client has gone: this chunk will never be written
          return; // leaving the loop ends the implementation's generator
        }
        sink ??= start(chunk.contentType);
        if (headOnly) {
          inFlight.unsent(chunk.data);
          break; // leaving the loop ends the implementation's generator
        }
        if (chunk.data.length === 0) continue;
        sent += chunk.data.length;
        if (exchange) exchange.streamedBytes = sent;
        await sink.write(chunk.data);
      }
    } catch (e) {
      if (!sink) throw e;
      res.destroy(e as Error); // the status is sent: a cut stream is the only honest signal
      return;
    }
    await (sink ?? start(JSON_CONTENT_TYPE)).end();
  }
}

/** Whether If-None-Match names the answer's ETag (or is "*"), compared weakly. */
function notModified(ifNoneMatch: string | undefined, etag: string | null): boolean {
  if (!ifNoneMatch || !etag) return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, "");
  return ifNoneMatch.split(",").some((t) => t.trim() === "*" || opaque(t) === opaque(etag));
}

/** Resolves when the response can take more, or is gone. */
function drainOrClose(res: NodeResponse): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}

/** A whole number as written in a path: decimal digits, no sign, no leading zero. */
const DECIMAL = /^(0|[1-9][0-9]*)$/;
/** In a query the same, or its negative (a field's own rule refuses a negative value in its own words). */
const SIGNED_DECIMAL = /^-?(0|[1-9][0-9]*)$/;

const INTEGER_SCALARS = new Set([
  ScalarType.INT32,
  ScalarType.INT64,
  ScalarType.UINT32,
  ScalarType.UINT64,
  ScalarType.SINT32,
  ScalarType.SINT64,
  ScalarType.FIXED32,
  ScalarType.FIXED64,
  ScalarType.SFIXED32,
  ScalarType.SFIXED64,
]);

function isInteger(field: DescField): boolean {
  return field.fieldKind === "scalar" && INTEGER_SCALARS.has(field.scalar);
}

function splitPath(pathname: string): string[] {
  const parts = pathname.split("/");
  parts.shift(); // leading ""
  return parts;
}

/** Vary: what the answer's coding depends on, and what the handler said its content depends on (D62: Accept-Language). */
function varyOf(res: NodeResponse, ctx: HandlerContext): string {
  const handler = ctx.responseHeader.get("vary");
  return varyAlso(res, handler ? `accept-encoding, ${handler}` : "accept-encoding");
}

/** Handler response headers worth passing on (custom ones, auth challenges); protocol headers stay behind. */
function passHeaders(h: Headers): Record<string, string> {
  const out: Record<string, string> = { "cache-control": PRIVATE };
  h.forEach((v, k) => {
    if (k.startsWith("connect-") || k.startsWith("grpc-") || hopHeaders.has(k) || k === "vary") return;
    out[k] = v;
  });
  return out;
}

/** A Content-Type's type, lower case, without parameters. */
function mediaTypeOf(header: string | undefined): string | undefined {
  return header?.split(";", 1)[0].trim().toLowerCase();
}

async function readJsonBody(req: NodeRequest, maxBytes: number, accepted: readonly string[] = []): Promise<string | undefined> {
  const others = accepted.length > 0 ? ` or ${accepted.join(" or ")}` : "";
  const length = req.headers["content-length"];
  const hasBody = (length !== undefined && length !== "0") || req.headers["transfer-encoding"] !== undefined;
  const type = req.headers["content-type"];
  if (type === undefined && !hasBody) return undefined;
  if (!isJsonMediaType(type)) {
    req.resume();
    throw failure("UNSUPPORTED_MEDIA_TYPE", `content type ${type ?? "(none)"} is not JSON; send application/json${others}`);
  }
  const bytes = await readBody(req, maxBytes);
  // A UTF-8 byte-order mark is not part of the JSON text (RFC 8259, 8.1: a parser may ignore it).
  const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  return bytes.length === bom ? undefined : bytes.toString("utf8", bom);
}
