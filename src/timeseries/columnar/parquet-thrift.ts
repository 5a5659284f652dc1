// Thrift's compact protocol, as much of it as a Parquet file's page headers
// and footer need (parquet.thrift): structs of i32, i64, binary, bool, list
// and struct fields. Values are written as they are added; a struct is a
// list of [field id, value] pairs in ascending id order.

/** A field's value: its compact type and how to write it. */
export type ThriftValue =
  | { type: "i32"; value: number }
  | { type: "i64"; value: number }
  | { type: "binary"; value: Uint8Array | string }
  | { type: "bool"; value: boolean }
  | { type: "struct"; value: ThriftStruct }
  | { type: "list"; element: "i32" | "binary" | "struct"; value: (number | Uint8Array | string | ThriftStruct)[] };

/** Fields by id; undefined ones are left out (optional fields). */
export type ThriftStruct = [number, ThriftValue | undefined][];

const TYPE = { boolTrue: 1, boolFalse: 2, i32: 5, i64: 6, binary: 8, list: 9, struct: 12 } as const;

export const i32 = (value: number): ThriftValue => ({ type: "i32", value });
export const i64 = (value: number): ThriftValue => ({ type: "i64", value });
export const binary = (value: Uint8Array | string): ThriftValue => ({ type: "binary", value });
export const bool = (value: boolean): ThriftValue => ({ type: "bool", value });
export const struct = (value: ThriftStruct): ThriftValue => ({ type: "struct", value });
export const list = (element: "i32" | "binary" | "struct", value: (number | Uint8Array | string | ThriftStruct)[]): ThriftValue => ({
  type: "list",
  element,
  value,
});

class Out {
  bytes: number[] = [];

  varint(v: number): void {
    // Values here are whole, >= 0 and below 2^53: division, not 32-bit shifts.
    while (v >= 0x80) {
      this.bytes.push((v % 0x80) | 0x80);
      v = Math.floor(v / 0x80);
    }
    this.bytes.push(v);
  }

  zigzag(v: number): void {
    this.varint(v >= 0 ? v * 2 : -v * 2 - 1);
  }

  binary(v: Uint8Array | string): void {
    const b = typeof v === "string" ? Buffer.from(v, "utf8") : v;
    this.varint(b.length);
    for (const x of b) this.bytes.push(x);
  }

  struct(fields: ThriftStruct): void {
    let last = 0;
    for (const [id, v] of fields) {
      if (v === undefined) continue;
      const type = v.type === "bool" ? (v.value ? TYPE.boolTrue : TYPE.boolFalse) : TYPE[v.type];
      if (id > last && id - last <= 15) this.bytes.push(((id - last) << 4) | type);
      else {
        this.bytes.push(type);
        this.zigzag(id);
      }
      last = id;
      if (v.type !== "bool") this.value(v);
    }
    this.bytes.push(0);
  }

  value(v: ThriftValue): void {
    switch (v.type) {
      case "i32":
      case "i64":
        return this.zigzag(v.value);
      case "binary":
        return this.binary(v.value);
      case "struct":
        return this.struct(v.value);
      case "list": {
        const n = v.value.length;
        const element = TYPE[v.element];
        if (n < 15) this.bytes.push((n << 4) | element);
        else {
          this.bytes.push(0xf0 | element);
          this.varint(n);
        }
        for (const e of v.value) {
          if (v.element === "i32") this.zigzag(e as number);
          else if (v.element === "binary") this.binary(e as Uint8Array | string);
          else this.struct(e as ThriftStruct);
        }
        return;
      }
      case "bool":
        return;
    }
  }
}

/** The struct in the compact protocol. */
export function compact(fields: ThriftStruct): Buffer {
  const out = new Out();
  out.struct(fields);
  return Buffer.from(out.bytes);
}
