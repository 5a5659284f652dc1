// Independent clients of the real server: @grpc/grpc-js (not Connect's),
// Connect over HTTP/2 and HTTP/1.1, gRPC-Web, and plain fetch for REST.
import * as grpc from "@grpc/grpc-js";
import { fromBinary, toBinary, type DescMethod, type DescMessage, type MessageShape, type MessageInitShape, create } from "@bufbuild/protobuf";
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
function grpcCall<I extends DescMessage, O extends DescMessage>(address: string, method: DescMethod & { input: I; output: O }, metadata: Record<string, string>) {
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

export function hostPort(url: string): string {
  return new URL(url).host;
}
