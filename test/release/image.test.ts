// D38 the single executable on a bare machine, and as the OCI image of
// `npm run image`, run by podman. Both need what `npm run image` made (the
// debootstrap roots under release/.work/image and dist/meridian-<version>-oci.tar);
// without it, or without root (chroot) or a podman that can run containers
// here, these cases are skipped and say why (and on the PostgreSQL run: the
// image is tested with its own SQLite file).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { IMAGE_USER, imagePaths } from "../../release/image-paths.mjs";
import { exited, startServe } from "../helpers/cli.js";
import { SQLITE_ONLY } from "../helpers/server.js";

const root = new URL("../..", import.meta.url).pathname;
const version = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version as string;
const paths = imagePaths(root, version);
const IS_ROOT = process.getuid?.() === 0;

const iso = (ms: number) => new Date(ms).toISOString().slice(0, 19) + "Z";
const WRITER = ["apikey", "create", "--client-id", "ops", "--role", "BackOffice", "--scope", "platform_iam_featurestatus_readwrite"];

/** A message published and listed back over REST: the server answers with its database. */
async function publishAndList(url: string, key: string) {
  const h = { "svc-open-api-key": key, "content-type": "application/json" };
  const created = await fetch(`${url}/api/admin/feature/orders/message`, {
    method: "POST",
    headers: h,
    body: JSON.stringify({
      type: "Warning",
      title: "Slow",
      body: "<p>ok</p>",
      startDate: iso(Date.now() - 60_000),
      expiringDate: iso(Date.now() + 3_600_000),
    }),
  });
  expect(created.status).toBe(201);
  const listed = (await (await fetch(`${url}/api/admin/feature/orders/message`, { headers: h })).json()) as { data: { title: string }[] };
  expect(listed.data.map((m) => m.title)).toEqual(["Slow"]);
}

const BARE_SKIP = SQLITE_ONLY
  ? SQLITE_ONLY
  : !existsSync(paths.base) || !existsSync(paths.binary)
    ? `not built: run npm run package, then npm run image (as root) to make ${paths.work}`
    : !IS_ROOT
      ? "chroot needs root"
      : undefined;

describe.skipIf(BARE_SKIP)(
  `D38 the single executable on a bare Debian (debootstrap --variant=minbase bookworm)${BARE_SKIP ? ` (${BARE_SKIP})` : ""}`,
  () => {
    // The binary and its files go in each root's tmp (npm run image leaves that out of the image).
    const name = `meridian-test-${process.pid}`;
    const inRoot = (r: string, ...p: string[]) => join(r, "tmp", name, ...p);
    beforeAll(() => {
      for (const r of [paths.bare, paths.base]) {
        mkdirSync(inRoot(r), { recursive: true });
        copyFileSync(paths.binary, inRoot(r, "meridian"));
      }
    });
    afterAll(() => {
      for (const r of [paths.bare, paths.base]) rmSync(inRoot(r), { recursive: true, force: true });
    });
    const env = {
      PATH: "/usr/sbin:/usr/bin:/sbin:/bin",
      MERIDIAN_DB: `/tmp/${name}/data/meridian.db`,
      MERIDIAN_CACHE_DIR: `/tmp/${name}/cache`,
    };
    const chroot = (r: string, args: string[]) => spawnSync("chroot", [r, `/tmp/${name}/meridian`, ...args], { env, encoding: "utf8" });

    it("D38 a minimal Debian lacks libatomic.so.1, which the binary needs (the README names the package, libatomic1)", () => {
      const r = chroot(paths.bare, ["--version"]);
      expect(r.status).toBe(127);
      expect(r.stderr).toContain("libatomic.so.1: cannot open shared object file");
    });

    it("D38 with libatomic1 installed it runs: --version, apikey create, serve, a message published and listed", async () => {
      expect(chroot(paths.base, ["--version"])).toMatchObject({ status: 0, stdout: `${version}\n` });
      expect(chroot(paths.base, ["init"]).status).toBe(0); // only serve and init create a database (D56)
      const key = chroot(paths.base, WRITER).stdout.trim();
      expect(key).toMatch(/^mrd_/);
      const server = await startServe("chroot", [paths.base, `/tmp/${name}/meridian`, "serve"], {
        ...env,
        MERIDIAN_PORT: "0",
        MERIDIAN_METRICS: "off",
      });
      try {
        await publishAndList(server.url, key);
      } finally {
        server.child.kill("SIGTERM");
      }
      expect(await exited(server.child)).toBe(0);
    });
  },
);

// podman with storage of its own in a temporary folder, so the test neither
// needs nor touches the machine's images: overlay, else vfs (no mount needed,
// but each container is a full copy of the image). Where a sandbox forbids
// what podman does by default, these flags get round it:
// cgroupfs (no systemd), runc when present (crun refuses a cgroup v1/v2 hybrid
// host), and explicit file and process limits no higher than a process may
// set without CAP_SYS_RESOURCE (podman's defaults for root are higher).
const storage = mkdtempSync(join(tmpdir(), "meridian-podman-"));
const hasRunc = spawnSync("sh", ["-c", "command -v runc"]).status === 0;
let driver = "overlay";
const podmanFlags = () => [
  "--root",
  join(storage, driver),
  "--runroot",
  join(storage, `${driver}-run`),
  "--storage-driver",
  driver,
  "--cgroup-manager",
  "cgroupfs",
  "--events-backend",
  "file",
  ...(hasRunc ? ["--runtime", "runc"] : []),
];
const LIMITS = ["--ulimit", "nofile=16384:16384", "--ulimit", "nproc=4096:4096"];
const IMAGE = `localhost/meridian:${version}`;

function podman(args: string[], timeout = 120_000) {
  return spawnSync("podman", [...podmanFlags(), ...args], { encoding: "utf8", timeout });
}

/** Removes the test's containers, volumes and images, and so their mounts (not `system reset`: that also drops the machine's networks). */
function forget() {
  podman(["rm", "-af", "-t", "0"]);
  podman(["volume", "rm", "-af"]);
  podman(["rmi", "-af"]);
}

/** Why podman cannot run the image here, or undefined: the image is loaded and run once. */
function podmanProblem(): string | undefined {
  if (SQLITE_ONLY) return SQLITE_ONLY; // the image's database is a SQLite file in its volume
  if (!existsSync(paths.archive)) return `not built: run npm run package, then npm run image (as root) to make ${paths.archive}`;
  if (spawnSync("sh", ["-c", "command -v podman"]).status !== 0) return "no podman (apt-get install podman runc)";
  const problems: string[] = [];
  for (driver of ["overlay", "vfs"]) {
    const loaded = podman(["load", "-i", paths.archive], 300_000);
    const ran = loaded.status === 0 ? podman(["run", "--rm", ...LIMITS, IMAGE, "--version"]) : loaded;
    if (ran.status === 0 && ran.stdout === `${version}\n`) return undefined;
    problems.push(`${driver}: ${(ran.stderr || ran.stdout || String(ran.error)).trim().split("\n").pop()}`);
    forget();
  }
  return `podman cannot run the image here (${problems.join("; ")})`;
}
const POD_SKIP = podmanProblem();
if (POD_SKIP) rmSync(storage, { recursive: true, force: true });

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

describe.skipIf(POD_SKIP)(`D38 the OCI image (npm run image) under podman${POD_SKIP ? ` (${POD_SKIP})` : ""}`, () => {
  afterAll(() => {
    forget();
    rmSync(storage, { recursive: true, force: true });
  });

  it("D38 the image runs the binary as a user of its own, port 8080 exposed, data in a volume", { timeout: 60_000 }, () => {
    const inspected = JSON.parse(podman(["image", "inspect", IMAGE]).stdout) as {
      Config: { User: string; ExposedPorts: object; Volumes: object; Entrypoint: string[]; Cmd: string[] };
    }[];
    expect(inspected[0].Config).toMatchObject({
      User: `${IMAGE_USER}:${IMAGE_USER}`,
      Entrypoint: ["/usr/local/bin/meridian"],
      Cmd: ["serve"],
    });
    expect(Object.keys(inspected[0].Config.ExposedPorts)).toEqual(["8080/tcp"]);
    expect(Object.keys(inspected[0].Config.Volumes)).toEqual(["/var/lib/meridian"]);
    const id = podman(["run", "--rm", ...LIMITS, "--entrypoint", "/usr/bin/id", IMAGE, "-u"]);
    expect(id.stdout.trim()).toBe(String(IMAGE_USER));
  });

  it(
    "D38 a key made in the volume by the image's CLI; serve with the image's defaults on a published port; podman stop drains and exits 0",
    { timeout: 120_000 },
    async () => {
      expect(podman(["volume", "create", "meridian-data"]).status).toBe(0);
      const vol = ["-v", "meridian-data:/var/lib/meridian"];
      expect(podman(["run", "--rm", ...LIMITS, ...vol, IMAGE, "init"]).status).toBe(0); // only serve and init create a database (D56)
      const created = podman(["run", "--rm", ...LIMITS, ...vol, IMAGE, ...WRITER]);
      expect(created.stderr).toContain("/var/lib/meridian/meridian.db");
      const key = created.stdout.trim();
      expect(key).toMatch(/^mrd_/);
      const port = await freePort();
      const started = podman(["run", "-d", "--name", "meridian", ...LIMITS, ...vol, "-p", `127.0.0.1:${port}:8080`, IMAGE]);
      expect(started.status, started.stderr).toBe(0);
      const url = `http://127.0.0.1:${port}`;
      await expect
        .poll(async () => (await fetch(`${url}/healthz`).catch(() => undefined))?.status, { timeout: 30_000, interval: 250 })
        .toBe(200);
      await publishAndList(url, key);
      const logs = podman(["logs", "meridian"]);
      const listening = JSON.parse(logs.stderr.split("\n").find((l) => l.includes('"address"'))!) as Record<string, string>;
      expect(listening).toMatchObject({
        address: "http://0.0.0.0:8080",
        db: "/var/lib/meridian/meridian.db",
        node: expect.stringMatching(/^v26\./),
      });
      expect(podman(["stop", "-t", "30", "meridian"]).status).toBe(0);
      expect(podman(["inspect", "--format", "{{.State.ExitCode}}", "meridian"]).stdout.trim()).toBe("0");
    },
  );
});
