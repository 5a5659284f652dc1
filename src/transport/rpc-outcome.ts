// The outcome of an RPC as its client read it (D59): the gRPC code name taken
// from the answer itself, whoever raised it: the implementation (which the
// error interceptor sees), or Connect before any interceptor ran (a refused
// credential, a body that is not its message, a message over its limit), which
// only the answer shows. Each protocol says it in its own place: gRPC in the
// grpc-status trailer, gRPC-Web in its trailer frame, Connect in the HTTP
// status and JSON error of a unary call or the end-of-stream message.
import type { UniversalServerResponse } from "@connectrpc/connect/protocol";
import type { Protocol } from "../metrics/metrics.js";
import { codeName } from "../kernel/reasons.js";

/** `res` with its body watched, and how to read its outcome once the body is sent. */
export function watchOutcome(
  protocol: Protocol,
  res: UniversalServerResponse,
): { res: UniversalServerResponse; outcome: () => string | undefined } {
  let last: Uint8Array | undefined;
  const body = res.body && remembering(res.body, (chunk) => (last = chunk));
  return { res: { ...res, body }, outcome: () => outcomeOf(protocol, res, last) };
}

async function* remembering(chunks: AsyncIterable<Uint8Array> | Uint8Array, keep: (c: Uint8Array) => void): AsyncIterable<Uint8Array> {
  if (chunks instanceof Uint8Array) chunks = [chunks] as unknown as AsyncIterable<Uint8Array>;
  for await (const chunk of chunks) {
    keep(chunk);
    yield chunk;
  }
}

function outcomeOf(protocol: Protocol, res: UniversalServerResponse, last: Uint8Array | undefined): string | undefined {
  const text = () => (last ? Buffer.from(last.buffer, last.byteOffset, last.byteLength).toString("latin1") : "");
  switch (protocol) {
    case "grpc":
    case "grpc-web": {
      // gRPC: the trailer, or the header of a trailers-only answer; gRPC-Web: the trailer frame, the body's last chunk.
      const status = res.trailer?.get("grpc-status") ?? res.header?.get("grpc-status") ?? /grpc-status:\s*(\d+)/i.exec(text())?.[1];
      return status === undefined ? undefined : grpcCodeName(Number(status));
    }
    case "connect": {
      // A unary error's JSON body, or a stream's end message: {"code": ...} / {"error": {"code": ...}}.
      const code = /"code"\s*:\s*"([a-z_]+)"/.exec(text())?.[1];
      if (res.status !== 200) return code ?? undefined;
      return (res.header?.get("content-type") ?? "").startsWith("application/connect+") ? (code ?? "ok") : "ok";
    }
    default:
      return undefined;
  }
}

function grpcCodeName(status: number): string {
  return status === 0 ? "ok" : codeName(status);
}
