// Types of image-paths.mjs, for the tests that read what npm run image made.
export declare const IMAGE_USER: number;
export declare function imagePaths(
  root: string,
  version: string,
): { work: string; bare: string; base: string; binary: string; archive: string };
