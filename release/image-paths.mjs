// Where `npm run image` (release/image.mjs) keeps its roots and writes its
// image; test/release/image.test.ts reads the same places.
import { join } from "node:path";

/** The image's user and group (not root; the number distroless images use for "nonroot"). */
export const IMAGE_USER = 65532;

export function imagePaths(root, version) {
  const work = join(root, "release", ".work", "image");
  return {
    work,
    /** debootstrap --variant=minbase bookworm, untouched: the bare machine. */
    bare: join(work, "bookworm-minbase"),
    /** The bare root with libatomic1, the image's user and folders: the image's first layer. */
    base: join(work, "bookworm-base"),
    binary: join(root, "dist", `meridian-${version}-linux-x64`),
    archive: join(root, "dist", `meridian-${version}-oci.tar`),
  };
}
