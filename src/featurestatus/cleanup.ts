// D22: deletes messages that expired longer ago than the retention period,
// global ones too, at start and then every interval; logs how many.
import type { Logger } from "../log/logger.js";
import type { MessageStore } from "./message-store.js";
import { nowSeconds } from "./message-fields.js";
import { isBusy } from "../storage/busy-retry.js";

export interface CleanupOptions {
  intervalS: number;
  retentionDays: number;
  logger: Logger;
  /** Seconds since the epoch. */
  now?: () => number;
}

export interface Cleanup {
  /** The run made at start, settled (it never rejects). */
  first: Promise<void>;
  runOnce(): Promise<number>;
  stop(): void;
}

export function startCleanup(store: MessageStore, opts: CleanupOptions): Cleanup {
  const now = opts.now ?? nowSeconds;
  const runOnce = async () => {
    const cutoff = now() - opts.retentionDays * 86_400;
    const deleted = await store.purgeExpiredBefore(cutoff);
    opts.logger.info({ deleted, retentionDays: opts.retentionDays }, `message cleanup deleted ${deleted} expired message(s)`);
    return deleted;
  };
  const safeRun = async () => {
    try {
      await runOnce();
    } catch (e) {
      // An import holding the write lock is routine (D51): the purge is
      // idempotent, so the next interval does the same work.
      if (isBusy(e)) opts.logger.warn("message cleanup skipped: the database is busy; it runs again at the next interval");
      else opts.logger.error({ err: e }, "message cleanup failed");
    }
  };
  const first = safeRun();
  const timer = setInterval(() => void safeRun(), opts.intervalS * 1000);
  timer.unref();
  return { first, runOnce, stop: () => clearInterval(timer) };
}
