// A 2xx means the write is on disk (D66), without the disk on the event loop.
//
// With synchronous=FULL, SQLite fsyncs the WAL inside every COMMIT, and
// better-sqlite3 runs COMMIT on the event loop: 3.5 ms here during which no
// request is read, so concurrent writers could not even join the next group.
// The serving connection commits with synchronous=NORMAL instead (the WAL is
// written, not yet synced) and every call that changed the database waits,
// before its answer, for an fsync of the WAL that began after its commit,
// made on libuv's thread pool: meanwhile the event loop reads, checks and
// commits the next writes. One fsync covers every commit before it began, so
// concurrent writers share it as they share a transaction. A commit already
// copied into the database file by a checkpoint is durable too: with NORMAL,
// a checkpoint syncs the database before the WAL is reused.
import { closeSync, fsync, openSync, statSync } from "node:fs";
import type { Statement } from "better-sqlite3";
import type { Db } from "./database.js";

export class WalSync {
  private readonly changes: Statement<[], number>;
  /** total_changes() as of the start of the last fsync that finished (what it covered). */
  private synced: number;
  /** The fsync asked for in this turn of the event loop, not yet begun: it covers whatever is committed when it begins. */
  private next: Promise<void> | undefined;
  /** The fsync begun last, while it runs, and what it covers. */
  private latest: { covers: number; done: Promise<void> } | undefined;
  private wal: { fd: number; ino: number } | undefined;

  /** `syncFile` is fs.fsync; a test may watch when it runs. */
  constructor(
    db: Db,
    private readonly walPath: string,
    private readonly syncFile: (fd: number, done: (e: Error | null) => void) => void = fsync,
  ) {
    this.changes = db.prepare<[], number>("SELECT total_changes()").pluck();
    this.synced = this.changes.get() ?? 0;
  }

  /**
   * Resolves once every change this connection committed so far is on disk;
   * at once when there is none. A commit joins the fsync begun last if that
   * began after it; otherwise the one that begins at the end of this turn
   * (every answer of a group commit joins the same), without waiting for
   * the one running to end: the kernel's journal takes concurrent fsyncs of
   * a file together, so an answer waits about one fsync, not two.
   */
  async durable(): Promise<void> {
    const mark = this.changes.get() ?? 0;
    if (this.synced >= mark) return;
    if (this.latest !== undefined && this.latest.covers >= mark) return this.latest.done;
    this.next ??= new Promise<void>((resolve, reject) =>
      setImmediate(() => {
        this.next = undefined;
        this.begin().then(resolve, reject);
      }),
    );
    return this.next;
  }

  /** Begins an fsync of the WAL covering every commit so far. */
  private begin(): Promise<void> {
    const covers = this.changes.get() ?? 0;
    const fd = this.walFd();
    const sync = {
      covers,
      done: new Promise<void>((resolve, reject) => this.syncFile(fd, (e) => (e ? reject(e) : resolve()))).finally(() => {
        if (this.latest === sync) this.latest = undefined;
      }),
    };
    void sync.done.then(
      () => (this.synced = Math.max(this.synced, covers)),
      () => {},
    );
    this.latest = sync;
    return sync.done;
  }

  /** The WAL's descriptor, opened again if the file was replaced (a last connection closed it meanwhile). */
  private walFd(): number {
    const ino = statSync(this.walPath).ino; // none would be a defect: this connection holds the WAL open
    if (this.wal?.ino !== ino) {
      if (this.wal) closeSync(this.wal.fd);
      this.wal = { fd: openSync(this.walPath, "r"), ino };
    }
    return this.wal.fd;
  }

  close(): void {
    if (this.wal) closeSync(this.wal.fd);
    this.wal = undefined;
  }
}
