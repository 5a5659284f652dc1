// Independent clients of the real server: @grpc/grpc-js (not Connect's),
// Connect over HTTP/2 and HTTP/1.1, gRPC-Web, and plain fetch for REST.
import * as grpc from "@grpc/grpc-js";
import {
  fromBinary,
  toBinary,
  type DescMethod,
  type DescMessage,
  type MessageShape,
  type MessageInitShape,
  create,
} from "@bufbuild/protobuf";
import { createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import type { DescService } from "@bufbuild/protobuf";

export function connectClient<S extends DescService>(service: S, baseUrl: string, httpVersion: "1.1" | "2" = "2"): Client<S> {
  return createClient(service, createConnectTransport({ baseUrl, httpVersion }));
}

export function grpcWebClient<S extends DescService>(service: S, baseUrl: string): Client<S> {
  return createClient(service, createGrpcWebTransport({ baseUrl, httpVersion: "1.1" }));
}

export interface GrpcResult<T> {
  error?: grpc.ServiceError;
  response?: T;
}

/** What a grpc-js call of a method needs: a client of its own, the path, protobuf-es (de)serialisation and the metadata. */
function grpcCall<I extends DescMessage, O extends DescMessage>(
  address: string,
  method: DescMethod & { input: I; output: O },
  metadata: Record<string, string>,
) {
  const md = new grpc.Metadata();
  for (const [k, v] of Object.entries(metadata)) md.set(k, v);
  return {
    client: new grpc.Client(address, grpc.credentials.createInsecure()),
    path: `/${method.parent.typeName}/${method.name}`,
    serialize: (m: MessageShape<I>) => Buffer.from(toBinary(method.input, m)),
    deserialize: (b: Buffer) => fromBinary(method.output, b),
    md,
  };
}

/** One unary call through grpc-js, with protobuf-es doing the (de)serialisation. */
export function grpcUnary<I extends DescMessage, O extends DescMessage>(
  address: string,
  method: DescMethod & { input: I; output: O },
  request: MessageInitShape<I>,
  metadata: Record<string, string> = {},
): Promise<GrpcResult<MessageShape<O>>> {
  const { client, path, serialize, deserialize, md } = grpcCall(address, method, metadata);
  return new Promise((resolve) => {
    client.makeUnaryRequest(path, serialize, deserialize, create(method.input, request), md, (error, response) => {
      client.close();
      resolve(error ? { error } : { response: response as MessageShape<O> });
    });
  });
}

/** A server-streaming call through grpc-js; collects every message. */
export function grpcStream<I extends DescMessage, O extends DescMessage>(
  address: string,
  method: DescMethod & { input: I; output: O },
  request: MessageInitShape<I>,
  metadata: Record<string, string> = {},
): Promise<{ messages: MessageShape<O>[]; error?: grpc.ServiceError }> {
  const { client, path, serialize, deserialize, md } = grpcCall(address, method, metadata);
  return new Promise((resolve) => {
    const messages: MessageShape<O>[] = [];
    const call = client.makeServerStreamRequest(path, serialize, deserialize, create(method.input, request), md);
    call.on("data", (m: MessageShape<O>) => messages.push(m));
    call.on("error", (error: grpc.ServiceError) => {
      client.close();
      resolve({ messages, error });
    });
    call.on("end", () => {
      client.close();
      resolve({ messages });
    });
  });
}

/** A client-streaming call through grpc-js: sends every request, then ends the stream; resolves with the answer or the error. */
export function grpcClientStream<I extends DescMessage, O extends DescMessage>(
  address: string,
  method: DescMethod & { input: I; output: O },
  requests: MessageInitShape<I>[],
  metadata: Record<string, string> = {},
): Promise<GrpcResult<MessageShape<O>>> {
  const { client, path, serialize, deserialize, md } = grpcCall(address, method, metadata);
  return new Promise((resolve) => {
    const call = client.makeClientStreamRequest(path, serialize, deserialize, md, (error, response) => {
      client.close();
      resolve(error ? { error } : { response: response as MessageShape<O> });
    });
    for (const r of requests) call.write(create(method.input, r));
    call.end();
  });
}

export function hostPort(url: string): string {
  return new URL(url).host;
}

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  trailers: Record<string, string | string[] | undefined>;
  body: string;
  /** Body bytes the client had handed to its socket when the answer's headers arrived. */
  sentAtAnswer: number;
}

/**
 * Sends a request whose body is `total` bytes (a prefix, then `fill` repeated),
 * written as the socket takes it, over HTTP/1.1 or HTTP/2 (cleartext), and
 * stops sending once the answer has come. The body is never held whole: one
 * 64 KiB chunk is written again and again.
 */
export async function rawUpload(
  url: string,
  opts: {
    httpVersion: "1.1" | "2";
    method?: string;
    path: string;
    headers: Record<string, string>;
    total: number;
    prefix?: Buffer;
    fill?: number;
  },
): Promise<RawAnswer> {
  const http = await import("node:http");
  const http2 = await import("node:http2");
  const chunk = Buffer.alloc(64 * 1024, opts.fill ?? 0x20);
  const prefix = opts.prefix ?? Buffer.alloc(0);
  let sent = 0;
  let answered = false;
  const pump = (w: NodeJS.WritableStream & { destroyed?: boolean; writableEnded?: boolean }) => {
    const step = () => {
      while (!answered && !w.destroyed && sent < opts.total) {
        const piece = sent === 0 && prefix.length ? prefix : chunk.subarray(0, Math.min(chunk.length, opts.total - sent));
        sent += piece.length;
        if (!w.write(piece)) return void w.once("drain", step);
      }
      if (!answered && !w.destroyed && !w.writableEnded) w.end();
    };
    step();
  };
  return new Promise<RawAnswer>((resolve, reject) => {
    const base = new URL(url);
    const headers = { ...opts.headers, "content-length": String(opts.total) };
    if (opts.httpVersion === "1.1") {
      const req = http.request({
        host: base.hostname,
        port: base.port,
        method: opts.method ?? "POST",
        path: opts.path,
        headers,
        agent: false,
      });
      req.on("error", (e) => (answered ? undefined : reject(e)));
      req.on("response", (res) => {
        answered = true;
        const sentAtAnswer = sent;
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (d: string) => (body += d));
        res.on("error", () => undefined);
        res.on("end", () => {
          resolve({ status: res.statusCode ?? 0, headers: res.headers, trailers: res.trailers, body, sentAtAnswer });
          req.destroy();
        });
      });
      pump(req);
    } else {
      const session = http2.connect(base.origin);
      session.on("error", () => undefined);
      const stream = session.request({ ":method": opts.method ?? "POST", ":path": opts.path, ...headers });
      let head: Record<string, string | string[] | undefined> = {};
      let trailers: Record<string, string | string[] | undefined> = {};
      let sentAtAnswer = 0;
      let body = "";
      stream.on("response", (h) => {
        answered = true;
        sentAtAnswer = sent;
        head = h;
      });
      stream.on("trailers", (t) => (trailers = t));
      stream.setEncoding("utf8");
      stream.on("data", (d: string) => (body += d));
      stream.on("error", () => undefined);
      stream.on("close", () => {
        session.close();
        if (!answered) return reject(new Error(`stream closed without an answer (rst ${stream.rstCode})`));
        resolve({ status: Number(head[":status"]), headers: head, trailers, body, sentAtAnswer });
      });
      pump(stream);
    }
  });
}
