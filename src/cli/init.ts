// meridian init (D56): creates the database of MERIDIAN_DB (the SQLite file
// and its folder, private to its user, or the schema in an existing PostgreSQL database), or
// brings an existing one's schema up to date. The only command besides serve
// that creates a database, so that none is ever made by mistake.
import { parseCommand } from "./args.js";
import { openCliBackend } from "./cli-database.js";

export const INIT_USAGE = `usage: meridian init
  creates the database of MERIDIAN_DB (a SQLite file and its folder, or the tables in an
  existing PostgreSQL database); on an existing database, brings its schema up to date
`;

export async function initCommand(argv: string[]): Promise<number> {
  if (!parseCommand(argv, INIT_USAGE, {})) return 0;
  const backend = await openCliBackend("init", "create");
  await backend.close();
  process.stderr.write(`meridian init: ${backend.created ? "created the database" : "the database is ready"}\n`);
  return 0;
}
