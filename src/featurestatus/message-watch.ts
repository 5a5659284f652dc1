// D46 live push: when the messages a watcher may see can have changed. A
// change is a write (this process's, and on PostgreSQL every replica's:
// MessageStore.watch) or the clock reaching the next start or expiry of a
// message, for which one timer serves every watcher (not polling). Watchers
// are bounded per process (beyond: 503, gRPC UNAVAILABLE).
import type { MessageStore } from "./message-store.js";
import { failure } from "../transport/errors.js";

/** setTimeout's longest delay is 2^31-1 ms; a farther boundary is re-checked after an hour. */
const MAX_WAIT_MS = 3_600_000;

export class MessageWatch {
  private readonly waiting = new Set<() => void>();
  private subscribers = 0;
  private timer: NodeJS.Timeout | undefined;
  private unwatch: (() => void) | undefined;

  constructor(
    private readonly store: MessageStore,
    private readonly maxSubscribers: number,
    private readonly now: () => number,
  ) {}

  /** Counts a subscriber in for as long as it holds the returned release; refuses one past the bound. */
  enter(): () => void {
    if (this.subscribers >= this.maxSubscribers) {
      throw failure("WATCHERS_EXHAUSTED", `this server has ${this.maxSubscribers} watchers already (MERIDIAN_MAX_WATCHERS); retry later or on another replica`, { headers: { "retry-after": "5" } });
    }
    if (this.subscribers++ === 0) {
      this.unwatch = this.store.watch(() => this.changed());
      this.arm();
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--this.subscribers === 0) {
        this.unwatch?.();
        clearTimeout(this.timer);
        this.timer = undefined;
      }
    };
  }

  /** Resolves at the next change, after `ms`, or when the signal aborts, whichever is first: true for a change. */
  next(ms: number, signal: AbortSignal): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (changed: boolean) => {
        this.waiting.delete(wake);
        clearTimeout(timeout);
        signal.removeEventListener("abort", aborted);
        resolve(changed);
      };
      const wake = () => done(true);
      const aborted = () => done(false);
      const timeout = setTimeout(() => done(false), ms);
      this.waiting.add(wake);
      signal.addEventListener("abort", aborted, { once: true });
    });
  }

  get count(): number {
    return this.subscribers;
  }

  private changed(): void {
    const woken = [...this.waiting];
    this.waiting.clear();
    for (const w of woken) w();
    this.arm(); // a write may have brought the next boundary nearer
  }

  /** One timer to the next second at which some message starts or expires. */
  private arm(): void {
    clearTimeout(this.timer);
    const asked = this.now();
    this.store.nextChangeAfter(asked).then(
      (at) => {
        if (this.subscribers === 0 || !Number.isFinite(at)) return;
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
