// The node flags `meridian serve` runs with. bin/meridian.js passes them on
// its first line (`env -S`), which is how `meridian serve`, `npx meridian
// serve` and `npm start` start the server; a test keeps the two in step.
//
// Why: the server's live heap is small (about 15 MB) while value reads
// allocate tens of megabytes a second. With V8's default limits the old
// generation's limit stays so close to its size that V8 marks and compacts
// every few tens of milliseconds (measured: 44 to 106 full collections per
// 500 pages of 100,000 rows), which took up to half the time of value reads.
// A 64 MB floor for the old generation makes that about one per 200 pages.
export const SERVE_NODE_FLAGS: readonly string[] = ["--initial-old-space-size=64"];

/** The flags of SERVE_NODE_FLAGS that this process was started without. */
export function missingNodeFlags(execArgv: readonly string[] = process.execArgv): string[] {
  return SERVE_NODE_FLAGS.filter((f) => !execArgv.includes(f));
}
