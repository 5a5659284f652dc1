// gRPC-Web's text mode (application/grpc-web-text), which Google's grpc-web
// client uses by default: the same frames as binary gRPC-Web, in base64.
// Connect serves binary gRPC-Web only, so a text call is decoded into a
// binary one on the way in and its answer encoded on the way out.
import { Code, ConnectError } from "@connectrpc/connect";
import type { UniversalServerRequest, UniversalServerResponse } from "@connectrpc/connect/protocol";

const TEXT = /^application\/grpc-web-text(\+proto)?\s*(;|$)/i;

export function isGrpcWebText(contentType: string | null | undefined): boolean {
  return contentType != null && TEXT.test(contentType);
}

/** The request as binary gRPC-Web: its body decoded from base64 as it arrives. */
export function textRequestToBinary(req: UniversalServerRequest): void {
  req.header.set("content-type", "application/grpc-web+proto");
  req.body = base64Decoded(req.body as AsyncIterable<Uint8Array>);
}

/** The answer as gRPC-Web text: its frames base64 encoded as they go. */
export function binaryResponseToText(res: UniversalServerResponse): UniversalServerResponse {
  const header = new Headers(res.header);
  if (header.get("content-type")?.startsWith("application/grpc-web")) header.set("content-type", "application/grpc-web-text+proto");
  return { ...res, header, body: res.body && base64Encoded(res.body) };
}

/**
 * Base64 text in chunks of any size, decoded. A client may pad each message
 * it sends on its own, so text is decoded up to and including each padded
 * quantum ("...=") separately.
 */
async function* base64Decoded(chunks: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  let pending = "";
  for await (const chunk of chunks) {
    pending += Buffer.from(chunk).toString("latin1").replace(/\s+/g, "");
    const whole = pending.length - (pending.length % 4);
    const text = pending.slice(0, whole);
    // Node's decoder skips what is not base64; a body that is not is the caller's error, not ours (D8).
    if (!QUANTA.test(text)) throw notBase64("it holds characters or padding that base64 does not");
    yield* decodeQuanta(text);
    pending = pending.slice(whole);
  }
  if (pending.length > 0) throw notBase64("its length is not a multiple of 4");
}

/** Whole base64 quanta, each padded on its own or not at all. */
const QUANTA = /^(?:[A-Za-z0-9+/]{4}|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{2}==)*$/;

function notBase64(why: string): ConnectError {
  return new ConnectError(`gRPC-Web text body is not base64: ${why}`, Code.InvalidArgument);
}

function* decodeQuanta(text: string): Generator<Uint8Array> {
  let start = 0;
  for (let i = 3; i < text.length; i += 4) {
    if (text[i] !== "=") continue;
    yield Buffer.from(text.slice(start, i + 1), "base64");
    start = i + 1;
  }
  if (start < text.length) yield Buffer.from(text.slice(start), "base64");
}

/** Bytes in chunks of any size, as one unbroken base64 text (unpadded until the end). */
async function* base64Encoded(chunks: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  let carry = Buffer.alloc(0);
  for await (const chunk of chunks) {
    const all = carry.length ? Buffer.concat([carry, chunk]) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const whole = all.length - (all.length % 3);
    if (whole > 0) yield Buffer.from(all.subarray(0, whole).toString("base64"), "latin1");
    carry = Buffer.from(all.subarray(whole));
  }
  if (carry.length > 0) yield Buffer.from(carry.toString("base64"), "latin1");
}
