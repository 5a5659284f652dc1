// The length-prefixed envelopes of gRPC, gRPC-Web and Connect streams: a flags
// byte (1: compressed; 0x80: gRPC-Web trailers; 2: Connect's end of stream), a
// 4-byte big-endian length, then the message. For tests that speak the wire.

export function envelope(message: Uint8Array, flags = 0): Buffer {
  const out = Buffer.alloc(5 + message.length);
  out[0] = flags;
  out.writeUInt32BE(message.length, 1);
  out.set(message, 5);
  return out;
}

export function envelopes(bytes: Buffer): { flags: number; data: Buffer }[] {
  const out = [];
  for (let at = 0; at < bytes.length;) {
    const length = bytes.readUInt32BE(at + 1);
    out.push({ flags: bytes[at], data: bytes.subarray(at + 5, at + 5 + length) });
    at += 5 + length;
  }
  return out;
}
