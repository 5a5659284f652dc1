// The server's WAL checkpoints, moved out of its commits (D51).
//
// SQLite's automatic checkpoint runs inside whichever commit finds the WAL
// past 1,000 pages. While `meridian import` writes, that is often one of the
// server's small writes, which then copies the importer's pages into the
// database on the event loop and its caller waits (bench/import: message
// writes p99 66-88 ms). The importer's own connection keeps the automatic
// checkpoint and does most of that copying in its process; the server
// checkpoints on a timer instead, PASSIVE (never waits for readers or the
// writer), so that a commit is only a commit.
import type { Logger } from "../log/logger.js";
import type { Db } from "./database.js";

export interface CheckpointOptions {
  intervalMs: number;
  logger: Logger;
}

/** Turns the connection's automatic checkpoint off and checkpoints every intervalMs instead. */
export function startCheckpoints(db: Db, opts: CheckpointOptions): { runOnce: () => CheckpointResult; stop: () => void } {
  db.pragma("wal_autocheckpoint = 0");
  const runOnce = (): CheckpointResult => {
    const [row] = db.pragma("wal_checkpoint(PASSIVE)") as { busy: number; log: number; checkpointed: number }[];
    return { walPages: row.log, checkpointedPages: row.checkpointed };
  };
  const timer = setInterval(() => {
    try {
      const started = performance.now();
      const r = runOnce();
      const ms = performance.now() - started;
      if (ms > 20) opts.logger.info({ ...r, ms: Math.round(ms) }, "WAL checkpoint");
    } catch (e) {
      opts.logger.warn({ err: e }, "WAL checkpoint failed; it runs again at the next interval");
    }
  }, opts.intervalMs);
  timer.unref();
  return { runOnce, stop: () => clearInterval(timer) };
}

export interface CheckpointResult {
  /** Pages in the WAL (-1 when the database is not in WAL mode). */
  walPages: number;
  /** Of those, pages now copied into the database file. */
  checkpointedPages: number;
}
