// Tells whoever watches the messages (D46 watchers, the listing's streams,
// D63 delivery) that they may have changed: after a write of this process
// commits (message-writes.ts), and when another process's write is heard
// (MessageStore.watch, PostgreSQL's change feed). Watchers run on a later
// turn of the event loop, never on the writer's call stack, and one that
// throws is reported and skips no other: no watcher can fail or slow a
// write. Changes told before the watchers ran are told once (a watcher
// reads what is there, not what changed).

export interface ChangeWatch {
  /** Calls fn after each change; returns the unsubscribe. */
  watch(fn: () => void): () => void;
}

export class ChangeBus implements ChangeWatch {
  private readonly watchers = new Set<() => void>();
  private due = false;

  /**
   * @param onError told of a watcher that threw
   * @param elsewhere changes made by other processes, told on as this process's own are
   */
  constructor(
    private readonly onError: (e: unknown) => void = () => {},
    elsewhere?: ChangeWatch,
  ) {
    elsewhere?.watch(() => this.publish());
  }

  watch(fn: () => void): () => void {
    this.watchers.add(fn);
    return () => this.watchers.delete(fn);
  }

  /** Tells every watcher, once the current call stack and the promise jobs after it are done. */
  publish(): void {
    if (this.due) return;
    this.due = true;
    setImmediate(() => {
      this.due = false;
      for (const w of [...this.watchers]) {
        try {
          w();
        } catch (e) {
          this.onError(e);
        }
      }
    });
  }
}
