// Which imports are under way (sqlite/import-staging.ts), and the removal of those
// that never will be published: a dead process's, or a published one's
// staging file that outlived a crash. Apart from the staging itself so that
// opening the database can tidy up without loading the block codec.
import { rmSync } from "node:fs";
import { hostname } from "node:os";
// The connection's type from the driver, not database.ts: opening the database tidies up here, so
// database.ts imports this module and a type import back would close a cycle.
import type { Database as Db } from "better-sqlite3";

/** Imports this process is running: a row with this pid but not listed here was left by an earlier process with the same pid (a container's pid 1). */
export const running = new Set<number>();

/**
 * Removes imports that will never be published: those published already
 * (their staged copy outlived a crash) and those whose process is gone.
 * A running import of another process is left alone.
 */
export function discardAbandonedImports(db: Db): number {
  if (!db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'imports'").get()) return 0; // a schema before migration 5
  const rows = db
    .prepare<[], { id: number; pid: number; host: string; published: number }>("SELECT id, pid, host, published FROM imports")
    .all();
  const host = hostname();
  const abandoned = rows.filter((r) => r.published === 1 || (r.host === host && !processRuns(r.pid, r.id))).map((r) => r.id);
  if (abandoned.length === 0) return 0;
  // Files first: a registration outlives its file, never the other way round.
  for (const id of abandoned) {
    const file = stagingFileOf(db, id);
    if (file) rmSync(file, { force: true });
  }
  const remove = db.prepare("DELETE FROM imports WHERE id = ?");
  db.transaction(() => abandoned.forEach((id) => remove.run(id))).immediate();
  return abandoned.length;
}

/** Import `id`'s staging file (D58): beside the database, on the disk its operator chose for it; undefined for an in-memory database. */
export function stagingFileOf(db: Db, id: number): string | undefined {
  const main = db
    .prepare<[], { name: string; file: string }>("PRAGMA database_list")
    .all()
    .find((d) => d.name === "main");
  return main?.file ? `${main.file}-import-${id}` : undefined;
}

function processRuns(pid: number, importId: number): boolean {
  if (pid === process.pid) return running.has(importId);
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"; // alive, another user's
  }
}
