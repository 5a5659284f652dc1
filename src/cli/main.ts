// meridian serve | apikey | import | backup | --help | --version. What a
// command creates goes alone to stdout; logs and messages go to stderr (D33).
import { VERSION } from "../app.js";
import { SettingError, settingsHelp } from "../config/settings.js";
import { apikeyCommand } from "./apikey.js";
import { UsageError } from "./args.js";
import { backupCommand } from "./backup.js";
import { NoDatabaseError } from "./cli-database.js";
import { importCommand } from "./import.js";
import { serveCommand } from "./serve.js";

const USAGE = `Meridian ${VERSION}: feature status messages and time series over gRPC, Connect and JSON.

Usage:
  meridian serve [flags]                 serve the API (npm start)
  meridian apikey create --client-id ID [--role R]... [--scope S]... [--project P]...
                                         print a new API key (shown once); meridian apikey --help
                                         lists the roles and scopes
  meridian apikey list [--json]          list keys: id, client id, roles, scopes, projects, created
  meridian apikey revoke ID|KEY          revoke a key; it gets 401 from then on
  meridian import --dataset ID --series ID FILE.csv
                                         load a CSV (timestamp, one column per data field) into a
                                         time series, all or nothing; prints a summary line
  meridian backup [--force] FILE         write a consistent copy of the database while it serves
  meridian COMMAND --help                a command's usage
  meridian --help | --version

Settings (environment variable, or the flag on serve; the flag wins):
${settingsHelp()}
`;

export async function main(argv: string[]): Promise<number> {
  try {
    const [command, ...rest] = argv;
    switch (command) {
      case "serve":
        return await serveCommand(rest);
      case "apikey":
        return await apikeyCommand(rest);
      case "import":
        return await importCommand(rest);
      case "backup":
        return await backupCommand(rest);
      case undefined:
      case "help":
      case "--help":
      case "-h":
        process.stdout.write(USAGE);
        return command === undefined ? 2 : 0;
      case "--version":
        process.stdout.write(`${VERSION}\n`);
        return 0;
      default:
        process.stderr.write(`meridian: unknown command "${command}"\n\n${USAGE}`);
        return 2;
    }
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`meridian ${argv[0]}: ${e.message}\n${e.usage}`);
      return 2;
    }
    if (e instanceof SettingError) {
      process.stderr.write(`meridian: ${e.message}\n`);
      return 2;
    }
    if (e instanceof NoDatabaseError) {
      process.stderr.write(`${e.message}\n`);
      return 1;
    }
    throw e;
  }
}
