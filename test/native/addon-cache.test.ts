// D38 the single executable's addon cache (src/native/addon-cache.ts): files
// named by content hash in a directory of ours closed to others, checked on
// every use, a changed one replaced before anything loads it.
import { afterAll, describe, expect, it } from "vitest";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cachedFile, defaultCacheDir, privateDir } from "../../src/native/addon-cache.js";

const root = mkdtempSync(join(tmpdir(), "meridian-addon-cache-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("D38 addon cache", () => {
  it("D38 writes a file once, named by its hash, in a directory it creates 0700", () => {
    const dir = join(root, "a", "cache");
    const file = cachedFile(dir, "x.node", Buffer.from("addon bytes"));
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(file).toMatch(/\/[0-9a-f]{32}-x\.node$/);
    expect(readFileSync(file, "utf8")).toBe("addon bytes");
    const mtime = statSync(file).mtimeMs;
    expect(cachedFile(dir, "x.node", Buffer.from("addon bytes"))).toBe(file);
    expect(statSync(file).mtimeMs).toBe(mtime);
    expect(readdirSync(dir)).toEqual([file.split("/").pop()]);
  });

  it("D38 a cached file that no longer matches its hash is replaced, not used", () => {
    const dir = join(root, "b");
    const file = cachedFile(dir, "x.node", Buffer.from("good"));
    writeFileSync(`${file}.evil`, "evil");
    renameSync(`${file}.evil`, file);
    expect(cachedFile(dir, "x.node", Buffer.from("good"))).toBe(file);
    expect(readFileSync(file, "utf8")).toBe("good");
  });

  it("D38 a directory open to group or others is refused", () => {
    const dir = join(root, "c");
    mkdirSync(dir, { mode: 0o700 });
    chmodSync(dir, 0o770);
    expect(() => privateDir(dir)).toThrow(
      `MERIDIAN_CACHE_DIR=${dir}: that folder is open to other users (mode 770); chmod 700 it, or set MERIDIAN_CACHE_DIR to a private folder`,
    );
    expect(() => cachedFile(dir, "x.node", Buffer.from("x"))).toThrow("chmod 700 it");
  });

  it("D38 the directory: MERIDIAN_CACHE_DIR, else XDG_CACHE_HOME/meridian, else ~/.cache/meridian", () => {
    expect(defaultCacheDir({ MERIDIAN_CACHE_DIR: "/m", XDG_CACHE_HOME: "/x" })).toBe("/m");
    expect(defaultCacheDir({ XDG_CACHE_HOME: "/x" })).toBe("/x/meridian");
    expect(defaultCacheDir({})).toMatch(/\/\.cache\/meridian$|meridian-\d+$/);
  });
});
