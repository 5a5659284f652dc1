// D46 live push: when the messages a watcher may see can have changed. A
// change is a write (this process's, and on PostgreSQL every replica's: the
// change bus, change-bus.ts) or the clock reaching the next start or expiry of a
// message, for which one timer serves every watcher (not polling). Watchers
// are bounded per process (beyond: 503, gRPC UNAVAILABLE) and per client, a
// credential from one address (D54, beyond: 429, gRPC RESOURCE_EXHAUSTED), so
// that one client cannot take every slot; a watcher that does not read what
// it is sent is dropped once too much of it waits here (D54); and when the
// server stops, every watcher ends at once (D57).
import type { ChangeWatch } from "./change-bus.js";
import type { MessageStore } from "../messages/message-store.js";
import { failure } from "../../kernel/errors.js";
import type { Outlet } from "../../kernel/long-answer.js";

export interface WatchLimits {
  /** Watchers this process serves at once (MERIDIAN_MAX_WATCHERS). */
  maxWatchers: number;
  /** Watchers one client (credential and address) holds at once (MERIDIAN_MAX_WATCHERS_PER_CLIENT). */
  maxPerClient: number;
  /** Bytes of a watcher's answer that may wait in this process for its client; past it, the watcher is dropped. */
  maxQueuedBytes: number;
  /** How often watchers that do not read are looked for, besides at every change. */
  sweepMs: number;
  /** Told of a watcher dropped for not reading. */
  onDropped?: (client: string, queuedBytes: number) => void;
}

/** One watcher: whose it is, its answer's outlet, and its release. */
interface Watcher {
  client: string;
  outlet?: Outlet;
  release: () => void;
  /** Bytes waiting at the last sweep that found it over the bound. */
  behind?: number;
}

/**
 * Past this many times the bound a watcher is dropped at once, at a change: a
 * client far behind while writes come faster than sweeps.
 */
const FAR_BEHIND = 16;

/** setTimeout's longest delay is 2^31-1 ms; a farther boundary is re-checked after an hour. */
const MAX_WAIT_MS = 3_600_000;
/** How long a watcher still writing when the server stops may take to finish its write (D57). */
const STUCK_AT_STOP_MS = 250;

export class MessageWatch {
  /** Watchers waiting for the next change, each told whether one came (false: the server stops). */
  private readonly waiting = new Set<(changed: boolean) => void>();
  private readonly watchers = new Set<Watcher>();
  /** Watchers per client. */
  private readonly perClient = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private sweeper: NodeJS.Timeout | undefined;
  private unwatch: (() => void) | undefined;
  private ended = false;

  constructor(
    private readonly store: Pick<MessageStore, "nextChangeAfter">,
    private readonly changes: ChangeWatch,
    private readonly limits: WatchLimits,
    private readonly now: () => number,
    /** Other changes that may alter what a watcher is sent (D63: a person's dismissals); each subscribes and returns its unsubscribe. */
    private readonly alsoChanges: ((fn: () => void) => () => void)[] = [],
  ) {}

  /**
   * Counts a watcher of `client` in for as long as it holds the returned
   * release; refuses one past a bound, before anything is sent.
   */
  enter(client: string, outlet?: Outlet): () => void {
    const { maxWatchers, maxPerClient } = this.limits;
    if (this.stopped)
      throw failure("SERVER_STOPPING", "this server is stopping; reconnect to another replica", { headers: { "retry-after": "1" } });
    if (this.watchers.size >= maxWatchers) {
      throw failure(
        "WATCHERS_EXHAUSTED",
        `this server has ${maxWatchers} watchers already (MERIDIAN_MAX_WATCHERS); retry later or on another replica`,
        { headers: { "retry-after": "5" } },
      );
    }
    const held = this.perClient.get(client) ?? 0;
    if (held >= maxPerClient) {
      throw failure(
        "CLIENT_WATCHERS_EXHAUSTED",
        `this client (credential and address) has ${maxPerClient} watchers open already (MERIDIAN_MAX_WATCHERS_PER_CLIENT); close one first`,
        { headers: { "retry-after": "5" } },
      );
    }
    this.perClient.set(client, held + 1);
    let released = false;
    const watcher: Watcher = {
      client,
      outlet,
      release: () => {
        if (released) return;
        released = true;
        this.watchers.delete(watcher);
        const n = (this.perClient.get(client) ?? 1) - 1; // counted when it entered
        if (n === 0) this.perClient.delete(client);
        else this.perClient.set(client, n);
        if (this.watchers.size === 0) {
          this.unwatch?.();
          clearTimeout(this.timer);
          clearInterval(this.sweeper);
          this.timer = this.sweeper = undefined;
        }
      },
    };
    this.watchers.add(watcher);
    if (this.watchers.size === 1) {
      const offs = [this.changes.watch(() => this.changed()), ...this.alsoChanges.map((watch) => watch(() => this.changed()))];
      this.unwatch = () => offs.forEach((off) => off());
      this.arm();
      this.sweeper = setInterval(() => this.sweep(), this.limits.sweepMs).unref();
    }
    return watcher.release;
  }

  /**
   * D57: ends every watcher and admits no more. Those waiting end cleanly now,
   * those writing when they next wait; one still stuck on a client that does
   * not read a moment later is cut.
   */
  stop(): void {
    if (this.stopped) return;
    this.ended = true;
    for (const w of [...this.waiting]) w(false);
    setTimeout(() => {
      for (const w of [...this.watchers]) if (w.outlet && w.outlet.queued() > 0) this.drop(w, w.outlet);
    }, STUCK_AT_STOP_MS).unref();
  }

  get stopped(): boolean {
    return this.ended;
  }

  /** Resolves at the next change, after `ms`, or when the signal aborts or the server stops, whichever is first: true for a change. */
  next(ms: number, signal: AbortSignal): Promise<boolean> {
    return new Promise((resolve) => {
      if (signal.aborted || this.stopped) return resolve(false);
      const done = (changed: boolean) => {
        this.waiting.delete(done);
        clearTimeout(timeout);
        signal.removeEventListener("abort", aborted);
        resolve(changed);
      };
      const aborted = () => done(false);
      const timeout = setTimeout(aborted, ms);
      this.waiting.add(done);
      signal.addEventListener("abort", aborted, { once: true });
    });
  }

  get count(): number {
    return this.watchers.size;
  }

  /**
   * D54: drops every watcher whose client took nothing since the last sweep while
   * more than the bound waited here. Over the bound alone is not enough: one set
   * may be larger than the bound, and a client still reading it (an HTTP/2
   * window, a slow link) is reading, not stuck.
   */
  private sweep(): void {
    const max = this.limits.maxQueuedBytes;
    for (const w of this.watchers) {
      if (!w.outlet) continue;
      const queued = w.outlet.queued();
      if (queued <= max) w.behind = undefined;
      else if (w.behind !== undefined && queued >= w.behind) this.limits.onDropped?.(w.client, this.drop(w, w.outlet));
      else w.behind = queued;
    }
  }

  /** At a change, before it is written: drops the watchers far behind (FAR_BEHIND). */
  private dropFarBehind(): void {
    const far = this.limits.maxQueuedBytes * FAR_BEHIND;
    for (const w of this.watchers) if (w.outlet && w.outlet.queued() > far) this.limits.onDropped?.(w.client, this.drop(w, w.outlet));
  }

  /** Cuts a watcher's answer; returns the bytes it left waiting. */
  private drop(w: Watcher, outlet: Outlet): number {
    const queued = outlet.queued();
    w.release(); // its slot is free at once, whenever its generator gets to run again
    outlet.drop();
    return queued;
  }

  private changed(): void {
    // Before the change is written out: what waits now is what the client has not taken.
    this.dropFarBehind();
    const woken = [...this.waiting];
    this.waiting.clear();
    for (const w of woken) w(true);
    this.arm(); // a write may have brought the next boundary nearer
  }

  /** One timer to the next second at which some message starts or expires. */
  private arm(): void {
    clearTimeout(this.timer);
    const asked = this.now();
    this.store.nextChangeAfter(asked).then(
      (at) => {
        if (this.watchers.size === 0 || !Number.isFinite(at)) return;
        clearTimeout(this.timer);
        // D19 windows are by whole seconds: wake just after second `at` begins.
        const ms = Math.min(MAX_WAIT_MS, Math.max(0, at * 1000 - Date.now()) + 5);
        this.timer = setTimeout(() => this.changed(), ms);
        this.timer.unref();
      },
      () => {
        // The database is away: the next write or watcher arms it again.
      },
    );
  }
}
