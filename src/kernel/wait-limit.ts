// A call waits for the database at most the connect plus the statement
// timeout (D40). postgres.js bounds one connection attempt and PostgreSQL one
// statement, but nothing bounds the time a query waits in the pool's queue
// while the database is away and every attempt fails in turn: a call still
// waiting at its limit answers 503. Its query may still run later; a 503
// never said that nothing was written.

/** `work`'s outcome, or `late()` as the rejection if it has not settled within `ms`. */
export function within<T>(work: Promise<T>, ms: number, late: () => unknown): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(late()), Math.max(0, ms));
    work.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}

/** What a call that waited too long is told (mapped to 503 like any unavailability). */
export class WaitLimitError extends Error {
  readonly code = "MERIDIAN_WAIT_LIMIT";
  constructor(ms: number) {
    super(`the database did not answer within ${ms} ms`);
  }
}
