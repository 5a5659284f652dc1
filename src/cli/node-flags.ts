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
//
// And a young generation of at most 2 MB a half (V8's default lets it grow to
// 16 MB): a long read's steady allocation grew it, and the server's peak RSS
// with it, by 20-25 MiB for one 10M-row read where a 1M-row read grew it by
// 4 (D28). Capped, one 10M-row read grows RSS by 4-6 MiB (identity) and
// 14-19 MiB (zstd, JSON and Arrow), the same across repeated reads, at the
// same server CPU time per read (same run: JSON 1M 38 ticks a read both ways,
// zstd 120 against 106, Arrow 10M 46 against 42): the live young objects of a
// request are few, so more frequent scavenges cost no more.
export const SERVE_NODE_FLAGS: readonly string[] = ["--initial-old-space-size=64", "--max-semi-space-size=2"];

/** The flags of SERVE_NODE_FLAGS that this process was started without. */
export function missingNodeFlags(execArgv: readonly string[] = process.execArgv): string[] {
  return SERVE_NODE_FLAGS.filter((f) => !execArgv.includes(f));
}
