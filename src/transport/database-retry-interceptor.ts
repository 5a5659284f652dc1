// The transport's retry of a call the database turned away, for both backends.
// The server never waits for SQLite's write lock on its event loop (D51): its
// connection fails at once with SQLITE_BUSY (neverWaitForLocks), and this
// interceptor runs a unary call that failed so again a little later, with
// timers, until it goes through or the budget is spent (then 503 with
// Retry-After). Retrying the whole call is safe because every unary write is
// one statement or one transaction: a busy failure wrote nothing. Uploads and
// deletes of values take the lock first (BEGIN IMMEDIATE), message and
// metadata writes are single statements, key lookups only read.
// Streamed reads only read (WAL readers never wait for writers); should one
// still meet a busy database, it is a 503 too, never a 500. On PostgreSQL a
// unary call waits for the database at most its wait limit (kernel/wait-limit.ts).
import { ConnectError, type Interceptor } from "@connectrpc/connect";
import { setTimeout as sleep } from "node:timers/promises";
import { failure } from "../kernel/errors.js";
import { exchangeKey } from "./exchange.js";
import { WaitLimitError, within } from "../kernel/wait-limit.js";
import { isBusy } from "../kernel/database-busy.js";
import { mapStreamErrors } from "../http/stream-errors.js";

export interface DatabaseRetryOptions {
  /** Errors that mean the database is away (PostgreSQL restarting, D40): a 503 at once, not retried. */
  unavailable: (e: unknown) => boolean;
  /** How long a call may keep retrying before it is a 503. */
  budgetMs: number;
  /** The first pause; each next one doubles, up to maxDelayMs. */
  firstDelayMs: number;
  maxDelayMs: number;
  /** Told of each wait for a lock (the metrics, D43). */
  onWait: () => void;
  /** Told of each call that found the database away or waited past its limit (readiness, D57). */
  onUnavailable: (e: unknown) => void;
  /** The longest a unary call waits for the database (PostgreSQL, D40), its credentials' lookup included; none when absent. */
  waitLimitMs?: number;
}

// An import holds the lock a few ms per batch and its publish about a hundred
// (bench/import): short first pauses, capped low, keep the added latency near
// what the lock holder needs.
const DEFAULTS: DatabaseRetryOptions = {
  unavailable: () => false,
  budgetMs: 10_000,
  firstDelayMs: 2,
  maxDelayMs: 25,
  onWait: () => {},
  onUnavailable: () => {},
};

function unavailable(cause?: unknown): ConnectError {
  const why = cause === undefined ? "busy" : "unavailable";
  return failure("DATABASE_UNAVAILABLE", `the database is ${why}; try again shortly`, { headers: { "retry-after": "1" }, cause });
}

export function databaseRetryInterceptor(options: Partial<DatabaseRetryOptions> = {}): Interceptor {
  const { unavailable: away, budgetMs, firstDelayMs, maxDelayMs, onWait, onUnavailable, waitLimitMs } = { ...DEFAULTS, ...options };
  /** The error a caller gets for `e`: a 503 when the database is busy or away, else `e`. */
  const answer = (e: unknown) => {
    if (isBusy(e)) return unavailable();
    if (!away(e) && !(e instanceof WaitLimitError)) return e;
    onUnavailable(e);
    return unavailable(e);
  };
  /** Runs a unary call, again after a pause each time it fails with SQLITE_BUSY, until the budget is spent. */
  const retrying = async <T>(run: () => Promise<T>, signal: AbortSignal): Promise<T> => {
    const giveUpAt = performance.now() + budgetMs;
    for (let delay = firstDelayMs; ; delay = Math.min(maxDelayMs, delay * 2)) {
      try {
        return await run();
      } catch (e) {
        if (!isBusy(e)) throw answer(e);
        if (performance.now() + delay > giveUpAt || signal.aborted) throw unavailable();
        onWait();
        // Jitter, so calls that met the same lock do not all come back at once.
        await sleep(delay * (0.5 + Math.random()));
      }
    }
  };
  return (next) => async (req) => {
    if (req.stream) {
      const res = await next(req).catch((e: unknown) => Promise.reject(answer(e)));
      return res.stream ? mapStreamErrors(res, answer) : res;
    }
    if (waitLimitMs === undefined) return retrying(() => next(req), req.signal);
    // The time the call's credentials took to check counts against its limit.
    const left = waitLimitMs - (req.contextValues.get(exchangeKey)?.databaseWaitMs ?? 0);
    return within(
      retrying(() => next(req), req.signal),
      left,
      () => answer(new WaitLimitError(waitLimitMs)),
    );
  };
}
