// A unit of work: the statements of one write, run in one transaction by a
// storage adapter, written once by a domain for every SQL dialect. A unit is
// a generator function of the adapter's statements; each statement is itself
// a step the unit delegates to, `const row = yield* tx.insertMessage(data)`,
// and the step's result is typed. A step yields only when its statement must
// be waited for (PostgreSQL): SQLite runs a whole unit synchronously inside
// better-sqlite3's transaction, so that nothing else on its one connection
// comes between the statements; PostgreSQL awaits each yielded statement
// inside sql.begin. Either way the adapter decides the transaction, and since
// a unit is a value, several can share one transaction with a savepoint each
// (D66 group commit: better-sqlite3's nested transaction, postgres.js's
// savepoint), one failing alone.

/** What a step may wait for: a pending statement. */
export type Pending = PromiseLike<unknown>;

/** One statement (or several) of a unit, delegated to with yield*; T is its result. */
export type Step<T> = Generator<Pending, T, unknown>;

/** A unit of work over the statements `Tx` of one transaction. */
export type Unit<Tx, T> = (tx: Tx) => Step<T>;

/** The transaction port a domain's writes go through. */
export interface UnitOfWork<Tx> {
  /** Runs the unit in one transaction: committed when it returns, rolled back (and rethrown) when it throws. */
  run<T>(unit: Unit<Tx, T>): Promise<T>;
}

/** A statement that runs when the unit reaches it, without waiting (SQLite). */
// eslint-disable-next-line require-yield -- a step that never waits still has the generator's shape
export function* immediate<T>(run: () => T): Step<T> {
  return run();
}

/** A statement the unit waits for (PostgreSQL); the driver feeds back what `start()` resolved to. */
export function* awaited<T>(start: () => PromiseLike<T>): Step<T> {
  return (yield start()) as T;
}

/** Runs a unit's steps to the end at once (SQLite, inside its transaction); a step that waits is a defect. */
export function runNow<T>(step: Step<T>): T {
  const r = step.next();
  if (!r.done) {
    step.return(undefined as never);
    throw new TypeError("a step waited inside a synchronous transaction");
  }
  return r.value;
}

/** Runs a unit's steps, awaiting each statement it yields and handing back its result or its error (PostgreSQL). */
export async function runAwaiting<T>(step: Step<T>): Promise<T> {
  let r = step.next();
  while (!r.done) {
    let value: unknown;
    try {
      value = await r.value;
    } catch (e) {
      r = step.throw(e);
      continue;
    }
    r = step.next(value);
  }
  return r.value;
}
