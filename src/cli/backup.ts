// meridian backup FILE (D39): a consistent copy of the database while the
// server runs, by SQLite's online backup (pages copied in steps, restarted
// by SQLite if a write lands meanwhile, so the copy is one committed state).
// Written under a temporary name and renamed, so FILE is never half a copy.
import { existsSync, renameSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { parseCommand, UsageError } from "./args.js";
import { openCliSqlite } from "./cli-database.js";

export const BACKUP_USAGE = `usage: meridian backup [--force] FILE
  writes a consistent copy of the database (MERIDIAN_DB) to FILE while the server runs;
  --force replaces an existing FILE. Restore: stop the server, put the copy in place of
  the database file, remove its -wal and -shm files, start the server.
`;

export async function backupCommand(argv: string[]): Promise<number> {
  const args = parseCommand(argv, BACKUP_USAGE, { force: { type: "boolean" } }, true);
  if (!args) return 0;
  if (args.positionals.length !== 1) throw new UsageError("expected one FILE", BACKUP_USAGE);
  const target = args.positionals[0];
  if (existsSync(target) && !args.values.force) {
    process.stderr.write(`meridian backup: ${target} exists; use --force to replace it\n`);
    return 1;
  }
  // Before the copy starts: SQLite would say only that "the directory does not exist" (issue 39 item 12).
  if (!isFolder(dirname(target))) {
    process.stderr.write(
      `meridian backup: there is no folder ${dirname(target)} for ${target}; create it or name a file in an existing folder\n`,
    );
    return 1;
  }
  const { db, close } = await openCliSqlite("backup", "back it up with pg_dump (README: More than one machine)");
  const temp = join(dirname(target), `.${basename(target)}.${process.pid}.partial`);
  const started = performance.now();
  try {
    const { totalPages } = await db.backup(temp);
    renameSync(temp, target);
    process.stderr.write(
      `meridian backup: wrote ${target} (${totalPages} pages) in ${((performance.now() - started) / 1000).toFixed(2)} s\n`,
    );
    return 0;
  } finally {
    rmSync(temp, { force: true });
    await close();
  }
}

function isFolder(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false })?.isDirectory() ?? false;
}
