// Reads measured by bench/values/client.js in its own process, in rounds (one
// of each read per round), so that reads compared with each other see the
// same moments of a noisy machine.
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { spread } from "./report.js";

const CLIENT = join(dirname(fileURLToPath(import.meta.url)), "values", "client.js");

export const median = (xs) => spread(xs).median;

/**
 * Runs the client process on `reads` for `reps` rounds (after a warm-up), without
 * blocking this one, which may be watching a server (nodeArgs: flags for its
 * node, such as a larger heap). Per read: the median
 * time, each round's time (for ratios taken within a round), bytes and pages.
 */
export async function clientRounds(reads, reps, nodeArgs = []) {
  const p = spawn(process.execPath, [...nodeArgs, CLIENT, JSON.stringify({ reps, reads })], { stdio: ["ignore", "pipe", "inherit"] });
  let stdout = "";
  p.stdout.on("data", (d) => (stdout += d));
  const code = await new Promise((resolve) => p.once("exit", resolve));
  if (code !== 0) throw new Error(`client exited ${code}`);
  const runs = stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  return reads.map((_, i) => {
    const mine = runs.filter((x) => x.read === i);
    const rounds = mine.map((x) => x.seconds);
    return { seconds: median(rounds), rounds, bytes: mine[0].bytes, pages: mine[0].pages };
  });
}

/** The median over rounds of a read's time over the baseline's time in the same round. */
export const roundRatio = (read, base) => median(read.rounds.map((s, i) => s / base.rounds[i]));
