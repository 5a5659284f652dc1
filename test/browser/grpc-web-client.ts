// Bundled for Chromium by test/transport/grpc-web-browser.test.ts: Google's
// grpc-web client (its default text mode) calling Meridian from a page, with
// protobuf-es doing the messages' bytes (no generated grpc-web stubs needed:
// a MethodDescriptor takes any serialiser).
import { create, fromBinary, toBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { GrpcWebClientBase, MethodDescriptor, type RpcError } from "grpc-web";
import {
  FeatureStatusService,
  ListGlobalMessagesRequestSchema,
  ListMessagesResponseSchema,
} from "../../src/gen/meridian/featurestatus/v1/feature_status_pb.js";
import { ReadValuesRequestSchema, TimeSeriesService, ValuesChunkSchema } from "../../src/gen/meridian/timeseries/v1/time_series_pb.js";

function descriptor<I extends DescMessage, O extends DescMessage>(path: string, kind: "unary" | "server_streaming", input: I, output: O) {
  const none = Object as unknown as new () => never;
  return new MethodDescriptor<MessageShape<I>, MessageShape<O>>(
    path,
    kind,
    none,
    none,
    (m: MessageShape<I>) => toBinary(input, m),
    (b: Uint8Array) => fromBinary(output, b),
  );
}

const listGlobal = descriptor(
  `/${FeatureStatusService.typeName}/ListGlobalMessages`,
  "unary",
  ListGlobalMessagesRequestSchema,
  ListMessagesResponseSchema,
);
const readValues = descriptor(`/${TimeSeriesService.typeName}/ReadValues`, "server_streaming", ReadValuesRequestSchema, ValuesChunkSchema);

declare global {
  interface Window {
    grpcWeb: typeof api;
  }
}

const api = {
  /** Titles of the global messages, or the error's code. */
  async listGlobal(base: string, key: string): Promise<{ titles?: string[]; code?: number; error?: string }> {
    const client = new GrpcWebClientBase({ format: "text" });
    try {
      const r = await client.unaryCall(
        base + listGlobal.getName(),
        create(ListGlobalMessagesRequestSchema, {}),
        { "svc-open-api-key": key },
        listGlobal,
      );
      return { titles: r.data.map((m) => m.title) };
    } catch (e) {
      return { code: (e as RpcError).code, ...((e as RpcError).code === undefined ? { error: String(e) } : {}) };
    }
  },
  /** Rows and chunks of a server-streamed read, and its final status. */
  readValues(
    base: string,
    headers: Record<string, string>,
    datasetId: string,
    timeSeriesId: string,
  ): Promise<{ rows: number; chunks: number; status: number; error?: string }> {
    const client = new GrpcWebClientBase({ format: "text" });
    return new Promise((resolve) => {
      let rows = 0;
      let chunks = 0;
      const stream = client.serverStreaming(
        base + readValues.getName(),
        create(ReadValuesRequestSchema, { datasetId, timeSeriesId }),
        headers,
        readValues,
      );
      stream.on("data", (c) => {
        chunks++;
        rows += c.timestamps.length;
      });
      stream.on("error", (e) => resolve({ rows, chunks, status: e.code, error: e.message }));
      stream.on("end", () => resolve({ rows, chunks, status: 0 }));
    });
  },
};
window.grpcWeb = api;
