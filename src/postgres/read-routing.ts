// D71 reads from standbys. MERIDIAN_DB_READ names PostgreSQL hosts (the
// standbys of a Patroni cluster, or all its nodes); the reads that may be
// served by them (message listings, and the value blocks behind values,
// charts, Arrow and Parquet) run there, everything else on the primary.
//
// What a read sees: everything committed on the primary before it began,
// whoever wrote it, on whichever replica. Each routed read first learns the
// primary's WAL position (one trivial query, shared by the reads that start
// together), then runs on a standby that has replayed up to it, waiting for
// one at most MERIDIAN_DB_READ_WAIT_MS, else on the primary. So a caller
// reads its own writes without being identified (no session, no sticky load
// balancer): its write was committed before its read began. Caches filled
// from standbys stay right for the same reason. A standby that could not
// catch up within the wait is left out until it has replayed what it lacked;
// one that does not answer is left out until it does.
import { AsyncLocalStorage } from "node:async_hooks";
import { within } from "../kernel/wait-limit.js";
import { connectPostgres, urlHosts, type PgOptions, type Sql } from "./database.js";

/** An LSN ("16/B374D848") as a number of bytes (exact up to 2^53: 8 PiB of WAL). */
export function lsnOf(text: string | null): number | undefined {
  if (!text) return undefined;
  const [hi, lo] = text.split("/");
  return parseInt(hi, 16) * 2 ** 32 + parseInt(lo, 16);
}

interface Standby {
  host: string;
  sql: Sql;
  /** The WAL replayed at the last look; Infinity when the host is a primary (it has everything). */
  replayed: number;
  /** Left out: until it has replayed this much (lagging), or until it answers again (Infinity). */
  outUntil?: number;
  looking?: Promise<void>;
}

export interface ReadRoutingOptions extends PgOptions {
  /** MERIDIAN_DB_READ: the hosts reads may go to (each its own pool). */
  readUrl: string;
  /** The longest a read waits for a standby to replay what it must show, then it reads from the primary. */
  waitMs: number;
}

/** Counts, for tests and the figures: where reads went. */
export interface ReadCounts {
  standby: number;
  primary: number;
  waited: number;
}

/** The URL for one of its hosts ("h:p"), target_session_attrs dropped (this module checks each host's role). */
export function urlForHost(url: string, host: string): string {
  return url
    .replace(/^([a-z]+:\/\/(?:[^@/?#]*@)?)[^/?#]*/i, `$1${host}`)
    .replace(/([?&])target_session_attrs=[^&#]*&?/, "$1")
    .replace(/[?&]$/, "");
}

export class ReadRouter {
  readonly counts: ReadCounts = { standby: 0, primary: 0, waited: 0 };
  private readonly standbys: Standby[];
  private readonly scope = new AsyncLocalStorage<Sql>();
  private next = 0;
  /** The ask of the primary's WAL position under way, and the next one, shared by the reads that began meanwhile. */
  private asking: Promise<number> | undefined;
  private queued: Promise<number> | undefined;

  constructor(
    private readonly primary: Sql,
    private readonly o: ReadRoutingOptions,
  ) {
    this.standbys = urlHosts(o.readUrl).map((host) => ({
      host,
      sql: connectPostgres({ ...o, url: urlForHost(o.readUrl, host) }),
      replayed: 0,
    }));
  }

  /**
   * The primary pool as the stores see it: inside a routed read (`read`) every
   * statement goes to the standby chosen for it, elsewhere to the primary.
   */
  routed(): Sql {
    const scope = this.scope;
    const primary = this.primary;
    return new Proxy(primary, {
      apply(target, thisArg, args) {
        return Reflect.apply(scope.getStore() ?? target, thisArg, args) as unknown;
      },
      get(target, p) {
        const s = scope.getStore() ?? target;
        const v = Reflect.get(s, p) as unknown;
        return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(s) : v;
      },
    });
  }

  /** Makes `methods` of `store` routed reads. */
  route<T extends object>(store: T, methods: readonly (keyof T)[]): T {
    for (const m of methods) {
      const original = store[m] as unknown as (...args: unknown[]) => Promise<unknown>;
      (store as Record<keyof T, unknown>)[m] = (...args: unknown[]) => this.read(() => original.apply(store, args));
    }
    return store;
  }

  /** Runs `fn` (statements through routed()) on a standby that has everything committed before now, else on the primary. */
  async read<R>(fn: () => Promise<R>): Promise<R> {
    if (this.scope.getStore()) return fn(); // already routed (a read calling a read)
    const standby = await this.choose().catch(() => undefined);
    if (!standby) {
      this.counts.primary++;
      return fn();
    }
    this.counts.standby++;
    return this.scope.run(standby.sql, fn);
  }

  async close(): Promise<void> {
    await Promise.all(this.standbys.map((s) => s.sql.end({ timeout: 1 })));
  }

  private async choose(): Promise<Standby | undefined> {
    this.lookAtAbsent();
    const candidates = this.standbys.filter((s) => s.outUntil !== Infinity);
    if (candidates.length === 0) return undefined;
    const floor = await this.primaryPosition();
    const waitEnd = performance.now() + this.o.waitMs;
    // Round robin over those not left out; one that lags is looked at (shared) until the wait is over.
    for (let i = 0; i < candidates.length; i++) {
      const s = candidates[(this.next + i) % candidates.length];
      if (s.outUntil !== undefined && s.replayed < s.outUntil) {
        void this.look(s); // lagging: is it back?
        continue;
      }
      s.outUntil = undefined;
      if (s.replayed >= floor) {
        this.next = (this.next + i + 1) % candidates.length;
        return s;
      }
    }
    this.counts.waited++;
    for (;;) {
      const looks = candidates.filter((s) => s.outUntil === undefined).map((s) => this.look(s));
      if (looks.length === 0) return undefined;
      await Promise.race([Promise.all(looks), new Promise((r) => setTimeout(r, Math.max(0, waitEnd - performance.now())))]);
      const ready = candidates.find((s) => s.outUntil === undefined && s.replayed >= floor);
      if (ready) return ready;
      if (performance.now() >= waitEnd) {
        // Too far behind: left out until it has replayed this much.
        for (const s of candidates) if (s.outUntil === undefined && s.replayed < floor) s.outUntil = floor;
        return undefined;
      }
      await new Promise((r) => setTimeout(r, 2));
    }
  }

  /**
   * The primary's current WAL position, asked after this read began: the
   * reads that begin while one ask is under way share the next.
   */
  private primaryPosition(): Promise<number> {
    if (!this.asking) {
      this.asking = within(
        this.primary<{ lsn: string }[]>`SELECT pg_current_wal_lsn()::text AS lsn`.then(([r]) => lsnOf(r.lsn) ?? 0),
        this.o.waitMs + 1_000,
        () => new Error("the primary's WAL position is not known"),
      ).finally(() => (this.asking = undefined));
      return this.asking;
    }
    this.queued ??= this.asking
      .catch(() => 0)
      .then(() => {
        this.queued = undefined;
        return this.primaryPosition();
      });
    return this.queued;
  }

  /** Asks a standby how far it has replayed (one ask at a time per standby). */
  private look(s: Standby): Promise<void> {
    s.looking ??= within(
      s.sql<{ lsn: string | null }[]>`SELECT pg_last_wal_replay_lsn()::text AS lsn`,
      Math.max(this.o.waitMs, 1_000),
      () => new Error("no answer"),
    )
      .then(
        ([r]) => {
          s.replayed = lsnOf(r.lsn) ?? Infinity; // no replay position: a primary
          if (s.outUntil !== undefined && s.replayed >= s.outUntil) s.outUntil = undefined;
          else if (s.outUntil === Infinity) s.outUntil = undefined;
        },
        () => {
          s.outUntil = Infinity; // away: left out until it answers
        },
      )
      .finally(() => (s.looking = undefined));
    return s.looking;
  }

  /** Those left out for not answering are asked again (one ask at a time each). */
  private lookAtAbsent(): void {
    for (const s of this.standbys) {
      if (s.outUntil === Infinity && !s.looking) {
        void this.look(s);
      }
    }
  }
}
