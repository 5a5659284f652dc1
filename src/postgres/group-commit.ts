// D66 group commit on PostgreSQL: writes that arrive while a commit is under
// way share the next transaction, each in a savepoint of its own (one failing
// is rolled back alone), so a burst of small writes costs one commit, not one
// each. A write waits for companions only while the transaction before it in
// its lane runs: a write that finds its lane idle starts at once. Writes are
// spread over a few lanes by key (a series), each lane one transaction at a
// time, so that one series' writes keep their order and wait in one queue
// rather than on each other's row locks; a group takes its locks in key
// order, as every group of every replica does, so two groups never wait on
// each other in a cycle. Nothing is acknowledged before the commit returns; a
// failed commit fails every write of the group, none of which is stored.
import type { Sql, TransactionSql } from "postgres";

/** The statements of one write, run on the group's transaction (a savepoint of it). */
export type PgWork<T> = (tx: TransactionSql) => Promise<T>;

interface Waiting {
  key: number;
  work: PgWork<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

interface Lane {
  waiting: Waiting[];
  busy: boolean;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** Lanes of value writes (plus the messages' own): a write's round trips overlap another lane's commit. */
const LANES = 4;
/** Writes in one group at most: a group's transaction holds its locks until all are done. */
const MAX_GROUP = 64;

export class PgGroupCommit {
  private readonly lanes: Lane[] = Array.from({ length: LANES }, () => ({ waiting: [], busy: false }));
  private readonly messages: Lane = { waiting: [], busy: false };
  /** Writes in each committed group, for the metrics. */
  onGroup?: (writes: number) => void;

  constructor(private readonly sql: Sql) {}

  /**
   * Runs `work` in a group's transaction; resolves with its result once the group committed.
   * `key` is a series' sid (it picks the lane and orders locks), or "messages": the message writes
   * keep a lane of their own, so that none waits behind a group of value writes.
   */
  run<T>(key: number | "messages", work: PgWork<T>): Promise<T> {
    const lane = key === "messages" ? this.messages : this.lanes[Math.abs(key) % LANES];
    return new Promise<T>((resolve, reject) => {
      lane.waiting.push({ key: key === "messages" ? 0 : key, work, resolve: resolve as (value: unknown) => void, reject });
      if (!lane.busy) void this.drain(lane);
    });
  }

  private async drain(lane: Lane): Promise<void> {
    lane.busy = true;
    try {
      while (lane.waiting.length > 0) await this.commit(lane.waiting.splice(0, MAX_GROUP));
    } finally {
      lane.busy = false;
    }
  }

  private async commit(group: Waiting[]): Promise<void> {
    if (group.length === 1) {
      // Alone: no savepoint to pay for.
      const [w] = group;
      try {
        w.resolve(await this.sql.begin((tx) => w.work(tx)));
        this.onGroup?.(1);
      } catch (error) {
        w.reject(error);
      }
      return;
    }
    // Key order: locks taken in the same order by every group (a stable sort keeps one key's writes in turn).
    const ordered = [...group].sort((a, b) => a.key - b.key);
    let outcomes: Outcome[];
    try {
      outcomes = await this.sql.begin(async (tx) => {
        const out: Outcome[] = [];
        for (const w of ordered) {
          try {
            out.push({ ok: true, value: await tx.savepoint((sp) => w.work(sp)) });
          } catch (error) {
            out.push({ ok: false, error });
          }
        }
        return out;
      });
    } catch (error) {
      for (const w of group) w.reject(error);
      return;
    }
    this.onGroup?.(group.length);
    outcomes.forEach((o, i) => (o.ok ? ordered[i].resolve(o.value) : ordered[i].reject(o.error)));
  }
}

const bySql = new WeakMap<Sql, PgGroupCommit>();

/** The group commit of a connection pool. */
export function pgGroupCommit(sql: Sql): PgGroupCommit {
  let g = bySql.get(sql);
  if (g === undefined) bySql.set(sql, (g = new PgGroupCommit(sql)));
  return g;
}
