// Which imports are under way (import/staging-sqlite.ts), and the removal of those
// that never will be published: a dead process's, or a published one's
// staged copy that outlived a crash. Apart from the staging itself so that
// opening the database can tidy up without loading the block codec.
import { hostname } from "node:os";
import type { Db } from "./database.js";

/** Imports this process is running: a row with this pid but not listed here was left by an earlier process with the same pid (a container's pid 1). */
export const running = new Set<number>();

/**
 * Removes imports that will never be published: those published already
 * (their staged copy outlived a crash) and those whose process is gone.
 * A running import of another process is left alone.
 */
export function discardAbandonedImports(db: Db): number {
  if (!db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'imports'").get()) return 0; // a schema before migration 5
  const rows = db.prepare<[], { id: number; pid: number; host: string; published: number }>("SELECT id, pid, host, published FROM imports").all();
  const host = hostname();
  const abandoned = rows.filter((r) => r.published === 1 || (r.host === host && !processRuns(r.pid, r.id))).map((r) => r.id);
  if (abandoned.length === 0) return 0;
  const remove = db.prepare("DELETE FROM imports WHERE id = ?");
  db.transaction(() => abandoned.forEach((id) => remove.run(id))).immediate();
  return abandoned.length;
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
