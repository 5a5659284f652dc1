// The arguments of a range read over one block (bytes, from, to, maxRows), checked as
// native/src/addon.cc's ReadRangeArgs takes them.

/** Checks a range read's arguments; returns the row bound as the uint32 the addon takes (Infinity: all). */
export function rowBound(name: string, bytes: Uint8Array, from: number, to: number, maxRows: number): number {
  if (!(bytes instanceof Uint8Array)) throw new TypeError(`${name}: expected a Uint8Array`);
  if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to)) throw new RangeError(`${name}: from and to must be whole seconds`);
  if (!(maxRows >= 0 && (Number.isInteger(maxRows) || maxRows === Infinity)))
    throw new RangeError(`${name}: maxRows must be a whole number >= 0 or Infinity`);
  return Math.min(maxRows, 0xffff_ffff);
}

/** Checks a plain byte argument. */
export function bytesArg(name: string, bytes: unknown): Uint8Array {
  if (!(bytes instanceof Uint8Array)) throw new TypeError(`${name}: expected a Uint8Array`);
  return bytes;
}
