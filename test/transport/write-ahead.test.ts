// The writer of streamed answers (D28, D44): up to `ahead` bytes may wait in
// the compressor or socket while the next chunk is made; beyond that a write
// waits for the oldest one to finish, not for the queue to empty as 'drain'
// would; a reader that leaves releases it.
import { describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { Writable } from "node:stream";
import { compressor } from "../../src/transport/compression.js";
import { WriteAhead } from "../../src/transport/write-ahead.js";
import { frameEnds } from "../helpers/frames.js";

/** A destination that finishes each write only when told to. */
function heldSink() {
  const pending: (() => void)[] = [];
  const out = new Writable({
    highWaterMark: 1, // its own buffering plays no part: the writer's lead is what is tested
    write(_chunk, _enc, cb) {
      pending.push(cb);
    },
  });
  return { out, finishOldest: () => pending.shift()!() };
}

/** Whether `p` settles before the event loop has turned a few times. */
async function settles(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(() => (done = true));
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  return done;
}

describe("D28 D44 writing a streamed answer ahead", () => {
  it("D44 a write resolves at once while no more than `ahead` bytes wait", async () => {
    const { out } = heldSink();
    const w = new WriteAhead(out, () => false, 1000);
    expect(await settles(w.write(new Uint8Array(400)))).toBe(true);
    expect(await settles(w.write(new Uint8Array(400)))).toBe(true);
    expect(w.queued).toBe(800);
  });

  it("D28 D44 beyond `ahead` a write waits for the oldest write to finish, not for all of them", async () => {
    const { out, finishOldest } = heldSink();
    const w = new WriteAhead(out, () => false, 1000);
    await w.write(new Uint8Array(400));
    await w.write(new Uint8Array(400));
    const third = w.write(new Uint8Array(400));
    expect(await settles(third)).toBe(false);
    finishOldest(); // 800 bytes still wait: within the lead
    expect(await settles(third)).toBe(true);
    expect(w.queued).toBe(800);
  });

  it("D28 a reader that leaves releases a waiting write", async () => {
    const { out } = heldSink();
    let gone = false;
    const w = new WriteAhead(out, () => gone, 100);
    const write = w.write(new Uint8Array(400));
    expect(await settles(write)).toBe(false);
    gone = true;
    w.wake();
    expect(await settles(write)).toBe(true);
  });

  it("D28 a compressor whose output nobody reads holds the writer back within a few MiB", async () => {
    const z = compressor("zstd"); // its readable side is never read: it fills and stops taking input
    const w = new WriteAhead(z, () => false, 1 << 20);
    const chunk = randomBytes(256 * 1024); // incompressible: every byte taken comes out again
    let accepted = 0;
    while (await settles(w.write(chunk))) {
      accepted += chunk.length;
      expect(accepted).toBeLessThan(16 << 20);
    }
    expect(accepted).toBeGreaterThanOrEqual(1 << 20);
    z.destroy();
  });

  it("D59 settled() waits for every write; a zstd compressor ended then writes one frame", async () => {
    const { out, finishOldest } = heldSink();
    const w = new WriteAhead(out, () => false, 1 << 20);
    await w.write(new Uint8Array(400));
    await w.write(new Uint8Array(400));
    const settled = w.settled();
    finishOldest();
    expect(await settles(settled)).toBe(false);
    finishOldest();
    expect(await settles(settled)).toBe(true);

    const z = compressor("zstd");
    const parts: Buffer[] = [];
    z.on("data", (c: Buffer) => parts.push(c));
    const ended = new Promise((resolve) => z.on("end", resolve));
    const zw = new WriteAhead(z, () => false, 1 << 20);
    for (let i = 0; i < 4; i++) await zw.write(Buffer.alloc(300_000, `row ${i},`));
    await zw.settled();
    z.end();
    await ended;
    const body = Buffer.concat(parts);
    expect(frameEnds("zstd", body)).toEqual([body.length]);
  });
});
