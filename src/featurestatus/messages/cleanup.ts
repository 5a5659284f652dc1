// D22: deletes messages that expired longer ago than the retention period,
// global ones too, at start and then every interval; logs how many. The same
// run removes audit entries older than theirs (D48), and D63's events as old
// whose deliveries are over, with their delivery log.
import type { Logger } from "../../log/logger.js";
import type { MessageStore } from "./message-store.js";
import type { MessageWrites } from "./message-writes.js";
import type { WebhookStore } from "../webhooks/webhooks.js";
import { nowSeconds } from "./message-fields.js";
import { isBusy } from "../../kernel/database-busy.js";

export interface CleanupOptions {
  intervalS: number;
  retentionDays: number;
  /** D48: days an audit entry is kept (default 365). */
  auditRetentionDays?: number;
  logger: Logger;
  /** Seconds since the epoch. */
  now?: () => number;
  /** Runs a cleanup, or skips it (undefined) when another process on the database just ran one. */
  gate?: (run: () => Promise<number>) => Promise<number | undefined>;
  /** D63: the outbox, kept as long as the audit trail. */
  webhooks?: Pick<WebhookStore, "purgeEventsBefore">;
  /** Errors that mean the database is away for now. */
  unavailable?: (e: unknown) => boolean;
}

export interface Cleanup {
  /** The run made at start, settled (it never rejects). */
  first: Promise<void>;
  /** How many it deleted; undefined when another process ran it this interval. */
  runOnce(): Promise<number | undefined>;
  stop(): void;
}

/** What a cleanup deletes through: the writes (expired messages, D22, recorded in the audit trail) and the store (old audit entries). */
export interface CleanupTargets {
  writes: Pick<MessageWrites, "purgeExpiredBefore">;
  store: Pick<MessageStore, "purgeAuditBefore">;
}

export function startCleanup({ writes, store }: CleanupTargets, opts: CleanupOptions): Cleanup {
  const now = opts.now ?? nowSeconds;
  const gate = opts.gate ?? ((run) => run());
  const runOnce = async (): Promise<number | undefined> => {
    const auditDays = opts.auditRetentionDays ?? 365;
    const deleted = await gate(async () => {
      // The outbox first: the messages' deletion is what a reader sees, and the run's log line follows it closely.
      await opts.webhooks?.purgeEventsBefore((now() - auditDays * 86_400) * 1000);
      const n = await writes.purgeExpiredBefore(now() - opts.retentionDays * 86_400);
      await store.purgeAuditBefore((now() - auditDays * 86_400) * 1000);
      return n;
    });
    if (deleted === undefined) opts.logger.debug("message cleanup skipped: another process on the database ran it this interval");
    else opts.logger.info({ deleted, retentionDays: opts.retentionDays }, `message cleanup deleted ${deleted} expired message(s)`);
    return deleted;
  };
  const safeRun = async () => {
    try {
      await runOnce();
    } catch (e) {
      // An import holding the write lock is routine (D51): the purge is
      // idempotent, so the next interval does the same work.
      if (isBusy(e)) opts.logger.warn("message cleanup skipped: the database is busy; it runs again at the next interval");
      else if (opts.unavailable?.(e))
        opts.logger.warn({ err: e }, "message cleanup skipped: the database is unavailable; it runs again at the next interval");
      else opts.logger.error({ err: e }, "message cleanup failed");
    }
  };
  const first = safeRun();
  const timer = setInterval(() => void safeRun(), opts.intervalS * 1000);
  timer.unref();
  return { first, runOnce, stop: () => clearInterval(timer) };
}
