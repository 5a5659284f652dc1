// The baseline codec: what a straightforward implementation in TypeScript
// (run here as its JavaScript) would store per block: timestamps as varint
// deltas, values as raw float32, flags as varints, through a DataView.

/** @param {Float64Array} ts @param {Float32Array} values @param {Int32Array} flags */
export function encode(ts, values, flags) {
  const n = ts.length;
  const out = new Uint8Array(16 + n * 20);
  const view = new DataView(out.buffer);
  let p = 0;
  const varint = (v) => {
    while (v >= 0x80) {
      out[p++] = (v & 0x7f) | 0x80;
      v = Math.floor(v / 128);
    }
    out[p++] = v;
  };
  view.setUint32(p, n, true);
  p += 4;
  view.setFloat64(p, ts[0], true);
  p += 8;
  for (let i = 1; i < n; i++) varint(ts[i] - ts[i - 1]);
  for (let i = 0; i < n; i++, p += 4) view.setFloat32(p, values[i], true);
  for (let i = 0; i < n; i++) varint(flags[i]);
  return out.slice(0, p);
}

/** @param {Uint8Array} bytes */
export function decode(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let p = 0;
  const varint = () => {
    let v = 0;
    let mul = 1;
    for (;;) {
      const b = bytes[p++];
      v += (b & 0x7f) * mul;
      if (b < 0x80) return v;
      mul *= 128;
    }
  };
  const n = view.getUint32(p, true);
  p += 4;
  const ts = new Float64Array(n);
  ts[0] = view.getFloat64(p, true);
  p += 8;
  for (let i = 1; i < n; i++) ts[i] = ts[i - 1] + varint();
  const values = new Float32Array(n);
  for (let i = 0; i < n; i++, p += 4) values[i] = view.getFloat32(p, true);
  const flags = new Int32Array(n);
  for (let i = 0; i < n; i++) flags[i] = varint();
  return { ts, values, flags };
}
