// Whether another connection committed (the CLI's import, another process):
// SQLite's PRAGMA data_version moves when one did. Read once per turn of the
// event loop and connection: the readers one change wakes all ask in the same
// turn (D46's watchers, a chart's batches), and a commit landing during it is
// seen from the next turn, as one landing just after it would be.
import type { Statement } from "better-sqlite3";
import type { Db } from "./database.js";

interface Version {
  read: Statement<[], number>;
  /** As read in this turn; undefined until asked. */
  value?: number;
}

const versions = new WeakMap<Db, Version>();

export function otherCommits(db: Db): number {
  let v = versions.get(db);
  if (v === undefined) {
    v = { read: db.prepare<[], number>("PRAGMA data_version").pluck() };
    versions.set(db, v);
  }
  if (v.value !== undefined) return v.value;
  const value = v.read.get() as number; // a PRAGMA always answers one row
  const turn = v;
  turn.value = value;
  setImmediate(() => (turn.value = undefined));
  return value;
}
