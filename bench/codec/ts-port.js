// The second baseline: the block decoder of native/src/block-codec.cc written
// straightforwardly in TypeScript (run here as its JavaScript). It reads the
// same bytes as the addon and does the same work: checksum, timestamps as
// step plus exceptions, decimal mantissas in frame, delta or run form, flags.
// So "native against this" is what C++ buys for this format, where
// ts-codec.js compares against a simpler format. bench.js checks that it
// decodes every block exactly as the addon does.

const POW10 = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18];
const INV_POW10 = [1, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10];
const PACK_PADDING = 8;

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    t[i] = c >>> 0;
  }
  return t;
})();

function crc32c(bytes, end) {
  let c = 0xffffffff;
  for (let i = 0; i < end; i++) c = CRC_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

class Reader {
  constructor(bytes, end) {
    this.bytes = bytes;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.p = 0;
    this.end = end;
  }
  take(n) {
    if (this.end - this.p < n) throw new Error("corrupt block: truncated");
    const at = this.p;
    this.p += n;
    return at;
  }
  u8() {
    return this.bytes[this.take(1)];
  }
  u32() {
    return this.view.getUint32(this.take(4), true);
  }
  i64() {
    return Number(this.view.getBigInt64(this.take(8), true));
  }
  varint() {
    let v = 0;
    for (let mul = 1; mul < 2 ** 64; mul *= 128) {
      const b = this.u8();
      v += (b & 0x7f) * mul;
      if (b < 0x80) return v;
    }
    throw new Error("corrupt block: varint longer than 10 bytes");
  }
  svarint() {
    const v = this.varint();
    return v % 2 === 0 ? v / 2 : -(v + 1) / 2;
  }
}

/**
 * Value i of a packed section: `width` bits starting at bit i * width, little
 * endian. Exact while shift + width stays within a double's 53 bits, which is
 * every width the bench's data has (bench.js compares each block with the addon's).
 */
function unpack(bytes, at, i, width) {
  const bit = i * width;
  let byte = at + (bit >>> 3);
  const shift = bit & 7;
  if (width <= 24) {
    // Fits one 32-bit load: integer operations only (the section is padded, so 4 bytes are always there).
    const word = bytes[byte] | (bytes[byte + 1] << 8) | (bytes[byte + 2] << 16) | (bytes[byte + 3] << 24);
    return (word >>> shift) & ((1 << width) - 1);
  }
  let v = 0;
  let scale = 1;
  for (let got = -shift; got < width; got += 8, byte++, scale *= 256) v += bytes[byte] * scale;
  return Math.floor(v / 2 ** shift) % 2 ** width;
}

function decodeInts(r, n, out) {
  const form = r.u8();
  if (form === 2) {
    const runs = r.varint();
    if (runs === 0 || runs > n) throw new Error("corrupt block: run count");
    let at = 0;
    for (let k = 0; k < runs; k++) {
      const value = r.svarint();
      const len = r.varint();
      if (len === 0 || len > n - at) throw new Error("corrupt block: run length");
      out.fill(value, at, at + len);
      at += len;
    }
    if (at !== n) throw new Error("corrupt block: runs do not cover the block");
    return;
  }
  if (form !== 0 && form !== 1) throw new Error("corrupt block: unknown integer form");
  const first = form === 1 ? r.svarint() : 0;
  const base = r.svarint();
  const width = r.u8();
  if (width > 56) throw new Error("corrupt block: pack width");
  const count = form === 1 ? n - 1 : n;
  const at = r.take(Math.ceil((count * width) / 8) + PACK_PADDING);
  if (form === 0) {
    for (let i = 0; i < n; i++) out[i] = base + unpack(r.bytes, at, i, width);
  } else {
    let acc = first;
    out[0] = acc;
    for (let i = 1; i < n; i++) out[i] = acc += base + unpack(r.bytes, at, i - 1, width);
  }
}

function readFloats(r, rows, out, double) {
  const scheme = r.u8();
  if (scheme === 1) {
    const at = r.take(out.BYTES_PER_ELEMENT * rows);
    for (let i = 0; i < rows; i++) out[i] = double ? r.view.getFloat64(at + 8 * i, true) : r.view.getFloat32(at + 4 * i, true);
    return;
  }
  if (scheme !== 0) throw new Error("corrupt block: float scheme");
  const e = r.u8();
  if (e > (double ? 18 : 10)) throw new Error("corrupt block: decimal exponent");
  const mantissas = new Float64Array(rows);
  decodeInts(r, rows, mantissas);
  for (let i = 0; i < rows; i++) out[i] = double ? mantissas[i] / POW10[e] : mantissas[i] * INV_POW10[e];
  const exceptions = r.varint();
  if (exceptions > rows) throw new Error("corrupt block: float exceptions");
  let at = -1;
  for (let k = 0; k < exceptions; k++) {
    at += r.varint();
    if (at >= rows) throw new Error("corrupt block: float exception index");
    const p = r.take(out.BYTES_PER_ELEMENT);
    out[at] = double ? r.view.getFloat64(p, true) : r.view.getFloat32(p, true);
  }
}

/** Decodes a block as the addon's decodeBlock does: {timestamps, columns: [{kind, values, missing}]}. */
export function decode(bytes) {
  const size = bytes.length;
  if (size < 4) throw new Error("corrupt block: truncated");
  const view = new DataView(bytes.buffer, bytes.byteOffset, size);
  if (crc32c(bytes, size - 4) !== view.getUint32(size - 4, true)) throw new Error("corrupt block: checksum mismatch");
  const r = new Reader(bytes, size - 4);
  if (r.u8() !== 1) throw new Error("corrupt block: unknown version");
  const count = r.u8();
  const rows = r.u32();
  if (rows === 0 || rows > 16536) throw new Error("corrupt block: row count");
  const first = r.i64();
  const kinds = [];
  for (let c = 0; c < count; c++) kinds.push(r.u8());

  const timestamps = new Float64Array(rows);
  timestamps[0] = first;
  if (rows > 1) {
    const step = r.svarint();
    let exceptions = r.varint();
    if (exceptions >= rows) throw new Error("corrupt block: timestamp exceptions");
    let at = 0;
    let next = exceptions > 0 ? r.varint() : 0;
    let t = first;
    for (let i = 1; i < rows; i++) {
      let delta = step;
      if (exceptions > 0 && i === at + next) {
        delta += r.svarint();
        at = i;
        if (--exceptions > 0) next = r.varint();
      }
      timestamps[i] = t += delta;
    }
    if (exceptions !== 0) throw new Error("corrupt block: timestamp exception index");
  }

  const columns = kinds.map((kind) => {
    const values = kind === 0 ? new Float32Array(rows) : kind === 1 ? new Float64Array(rows) : new Int32Array(rows);
    let missing = null;
    const form = r.u8();
    if (form === 2) return { kind, values, missing: new Uint8Array(rows).fill(1) };
    if (form === 1) {
      const at = r.take((rows + 7) >>> 3);
      missing = new Uint8Array(rows);
      for (let i = 0; i < rows; i++) missing[i] = (bytes[at + (i >>> 3)] >>> (i & 7)) & 1;
    } else if (form !== 0) throw new Error("corrupt block: missing-value form");
    if (kind === 2) {
      const ids = new Float64Array(rows);
      decodeInts(r, rows, ids);
      for (let i = 0; i < rows; i++) {
        if (ids[i] < -(2 ** 31) || ids[i] >= 2 ** 31) throw new Error("corrupt block: flag id out of range");
        values[i] = ids[i];
      }
    } else {
      readFloats(r, rows, values, kind === 1);
    }
    return { kind, values, missing };
  });
  if (r.p !== r.end) throw new Error("corrupt block: trailing bytes");
  return { timestamps, columns };
}
