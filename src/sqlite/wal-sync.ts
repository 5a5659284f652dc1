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
  /** total_changes() as of the start of the last fsync (what it covers). */
  private synced: number;
  private running: Promise<void> | undefined;
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

  /** Resolves once every change this connection committed so far is on disk; at once when there is none. */
  async durable(): Promise<void> {
    const mark = this.changes.get() ?? 0;
    while (this.synced < mark) {
      // An fsync under way may have begun before this commit: wait for it, then check again.
      if (this.running) await this.running;
      else await (this.running = this.sync().finally(() => (this.running = undefined)));
    }
  }

  private async sync(): Promise<void> {
    const covers = this.changes.get() ?? 0;
    const fd = this.walFd();
    await new Promise<void>((resolve, reject) => this.syncFile(fd, (e) => (e ? reject(e) : resolve())));
    this.synced = Math.max(this.synced, covers);
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
