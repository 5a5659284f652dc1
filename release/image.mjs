#!/usr/bin/env node
// `npm run image` (D38): the single executable on a minimal Debian, as an OCI
// image in one file, dist/meridian-<version>-oci.tar (an oci-archive: `podman
// load -i`, or `skopeo copy oci-archive:... docker://your-registry/...`).
// No daemon and no registry: Debian's debootstrap makes the root, umoci
// writes the image. Run as root, after `npm run package`.
//   1. debootstrap --variant=minbase bookworm: the bare machine the binary is
//      tested on (release/.work/image/bookworm-minbase, kept between runs).
//   2. A copy with what the binary needs beyond that, installed as the
//      README tells an operator to (apt-get install libatomic1), and the
//      image's user and folders (release/.work/image/bookworm-base, kept).
//   3. The image: that root as one layer, the binary as a second (so a new
//      build ships one new layer), and the settings a container needs.
import { execFileSync } from "node:child_process";
import {
  appendFileSync,
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { IMAGE_USER, imagePaths } from "./image-paths.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const paths = imagePaths(root, version);
const mirror = process.env.MERIDIAN_DEBIAN_MIRROR || "http://deb.debian.org/debian";
const started = performance.now();

if (process.platform !== "linux" || process.arch !== "x64") throw new Error("npm run image builds for Linux x64 only");
if (process.getuid() !== 0) throw new Error("npm run image needs root (debootstrap and chroot make the image's root)");
if (!existsSync(paths.binary)) throw new Error(`${paths.binary} is missing; run npm run package first`);
for (const [tool, pkg] of [
  ["debootstrap", "debootstrap"],
  ["umoci", "umoci"],
]) {
  try {
    execFileSync("sh", ["-c", `command -v ${tool}`], { stdio: "ignore" });
  } catch {
    throw new Error(`npm run image needs ${tool} (apt-get install ${pkg})`);
  }
}

/** Runs a step and says how long it took (CI's log shows where its minutes go). */
function step(label, fn) {
  const t0 = performance.now();
  fn();
  console.error(`${label}: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

const run = (cmd, args) => execFileSync(cmd, args, { stdio: ["ignore", "inherit", "inherit"] });

/** Makes `dir` by `make(tmp)`, under a temporary name renamed at the end, so a run stopped midway leaves nothing half made. */
function cached(dir, label, make) {
  if (existsSync(dir)) {
    console.error(`${label}: kept from an earlier run (${dir})`);
    return;
  }
  const tmp = `${dir}.tmp`;
  rmSync(tmp, { recursive: true, force: true });
  step(label, () => make(tmp));
  renameSync(tmp, dir);
}

mkdirSync(paths.work, { recursive: true });

// 1. The bare machine.
cached(paths.bare, "debootstrap --variant=minbase bookworm", (tmp) => run("debootstrap", ["--variant=minbase", "bookworm", tmp, mirror]));

// 2. The image's root.
cached(paths.base, "image root (libatomic1, user, folders)", (tmp) => {
  run("cp", ["-a", paths.bare, tmp]);
  const chroot = (...args) => run("chroot", [tmp, ...args]);
  writeFileSync(join(tmp, "etc", "resolv.conf"), readFileSync("/etc/resolv.conf"));
  chroot("apt-get", "update", "-qq");
  chroot(
    "env",
    "DEBIAN_FRONTEND=noninteractive",
    "apt-get",
    "install",
    "-y",
    "-qq",
    "-o",
    "Dpkg::Use-Pty=0",
    "--no-install-recommends",
    "libatomic1",
  );
  chroot("apt-get", "clean");
  writeFileSync(join(tmp, "etc", "resolv.conf"), ""); // the runtime provides its own
  for (const d of ["var/lib/apt/lists", "usr/share/doc", "usr/share/man", "usr/share/info", "usr/share/locale"]) {
    rmSync(join(tmp, d), { recursive: true, force: true });
    mkdirSync(join(tmp, d), { recursive: true });
  }
  // A user of its own, not root; its data and addon cache folders closed to others.
  appendFileSync(join(tmp, "etc", "passwd"), `meridian:x:${IMAGE_USER}:${IMAGE_USER}:Meridian:/var/lib/meridian:/usr/sbin/nologin\n`);
  appendFileSync(join(tmp, "etc", "group"), `meridian:x:${IMAGE_USER}:\n`);
  for (const d of ["var/lib/meridian", "var/cache/meridian"]) {
    mkdirSync(join(tmp, d), { recursive: true });
    chownSync(join(tmp, d), IMAGE_USER, IMAGE_USER);
    chmodSync(join(tmp, d), 0o700);
  }
});

// 3. The image.
const layout = join(paths.work, "oci");
const image = `${layout}:${version}`;
step("OCI image (umoci: root layer, binary layer, config)", () => {
  rmSync(layout, { recursive: true, force: true });
  run("umoci", ["init", "--layout", layout]);
  run("umoci", ["new", "--image", image]);
  // The bare-machine tests run the binary in this root, from its tmp: nothing of theirs goes in the image.
  rmSync(join(paths.base, "tmp"), { recursive: true, force: true });
  mkdirSync(join(paths.base, "tmp"));
  chmodSync(join(paths.base, "tmp"), 0o1777);
  run("umoci", ["insert", "--image", image, "--history.comment", "Debian bookworm minbase with libatomic1", paths.base, "/"]);
  const binary = join(paths.work, "meridian");
  copyFileSync(paths.binary, binary);
  chmodSync(binary, 0o755);
  run("umoci", ["insert", "--image", image, "--history.comment", `meridian ${version}`, binary, "/usr/local/bin/meridian"]);
  rmSync(binary);
  const env = [
    "PATH=/usr/local/bin:/usr/bin:/bin",
    "MERIDIAN_HOST=0.0.0.0", // a container's port is reached from outside its own network namespace
    "MERIDIAN_DB=/var/lib/meridian/meridian.db",
    // A folder the process makes (0700) under one of the image's: an empty volume mounted there (e.g.
    // Kubernetes' emptyDir, open to all) still gives a private cache.
    "MERIDIAN_CACHE_DIR=/var/cache/meridian/addons",
  ];
  run("umoci", [
    "config",
    "--image",
    image,
    "--architecture",
    "amd64",
    "--os",
    "linux",
    "--config.user",
    `${IMAGE_USER}:${IMAGE_USER}`,
    "--config.entrypoint",
    "/usr/local/bin/meridian",
    "--config.cmd",
    "serve",
    ...env.flatMap((e) => ["--config.env", e]),
    "--config.exposedports",
    "8080/tcp",
    "--config.volume",
    "/var/lib/meridian",
    "--config.workingdir",
    "/var/lib/meridian",
    "--config.stopsignal",
    "SIGTERM",
    "--config.label",
    `org.opencontainers.image.version=${version}`,
    "--config.label",
    "org.opencontainers.image.title=meridian",
  ]);
  run("umoci", ["gc", "--layout", layout]);
  // umoci's tags are bare words; a loader names the image by this annotation (podman load: localhost/meridian:<version>).
  const index = JSON.parse(readFileSync(join(layout, "index.json"), "utf8"));
  for (const m of index.manifests) m.annotations = { ...m.annotations, "org.opencontainers.image.ref.name": `meridian:${version}` };
  writeFileSync(join(layout, "index.json"), JSON.stringify(index));
  // One file: the layout as a tar is an oci-archive.
  const tmp = `${paths.archive}.tmp`;
  run("tar", ["-C", layout, "-cf", tmp, "."]);
  renameSync(tmp, paths.archive);
  rmSync(layout, { recursive: true, force: true });
});

const mb = (n) => (n / 1024 / 1024).toFixed(1);
console.error(
  `${paths.archive}: ${mb(statSync(paths.archive).size)} MB, tag ${version}, built in ${((performance.now() - started) / 1000).toFixed(1)} s`,
);
