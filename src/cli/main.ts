// meridian serve | init | apikey | webhook | import | backup | --help | --version. What
// a command creates goes alone to stdout; logs and messages go to stderr (D33).
// A failure an operator fixes is one line (D56); any other failure too, with
// its stack only at log level debug.
//
// Each command's module is imported when it runs: --version, --help and
// `apikey list` do not load the server (a CLI call from a checkout answers in
// well under half a second).
import { OperatorError } from "../config/operator-error.js";
import { settingsHelp, unknownVariables, unknownVariableWarning } from "../config/settings.js";
import { VERSION } from "../version.js";
import { likelyMeant } from "../config/nearest.js";
import { UsageError } from "./args.js";

const COMMANDS = ["serve", "init", "apikey", "webhook", "import", "backup", "help"];

const USAGE = `Meridian ${VERSION}: feature status messages and time series over gRPC, Connect and JSON.

Usage:
  meridian serve [flags]                 serve the API, creating its database if there is none;
                                         meridian serve --help lists the flags
  meridian init                          create the database of MERIDIAN_DB (the other commands
                                         refuse to work where there is none)
  meridian apikey create --client-id ID [--role R]... [--scope S]... [--project P]...
                                         print a new API key (shown once); meridian apikey --help
                                         lists the roles and scopes
  meridian apikey list [--json]          list keys: id, client id, roles, scopes, projects, created
  meridian apikey revoke ID|KEY          revoke a key; it gets 401 from then on
  meridian webhook add --url URL [--secret S] [--event E]...
                                         register an endpoint told of message changes; prints
                                         its signing secret; meridian webhook --help says more
  meridian webhook list [--json]         list endpoints: id, url, events, created
  meridian webhook remove ID             remove an endpoint
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
    const command = argv.at(0);
    const rest = argv.slice(1);
    // serve logs these as JSON lines (D34), as the first lines of its log.
    if (command !== "serve") for (const u of unknownVariables()) process.stderr.write(`meridian: warning: ${unknownVariableWarning(u)}\n`);
    switch (command) {
      case "serve":
        return await (await import("./serve.js")).serveCommand(rest);
      case "init":
        return await (await import("./init.js")).initCommand(rest);
      case "apikey":
        return await (await import("./apikey.js")).apikeyCommand(rest);
      case "webhook":
        return await (await import("./webhook.js")).webhookCommand(rest);
      case "import":
        return await (await import("./import.js")).importCommand(rest);
      case "backup":
        return await (await import("./backup.js")).backupCommand(rest);
      case undefined:
      case "help":
      case "--help":
      case "-h":
        process.stdout.write(USAGE);
        return command === undefined ? 2 : 0;
      case "--version":
        process.stdout.write(`${VERSION}\n`);
        return 0;
      default: {
        const meant = likelyMeant(command, COMMANDS);
        process.stderr.write(
          meant
            ? `meridian: unknown command "${command}"; did you mean "${meant}"? (meridian --help lists the commands)\n`
            : `meridian: unknown command "${command}"\n\n${USAGE}`,
        );
        return 2;
      }
    }
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(
        `meridian ${argv[0]}: ${e.message}\n${e.suggested ? `(meridian ${argv[0]} --help shows the usage)\n` : e.usage}`,
      );
      return 2;
    }
    const command = argv[0] === "apikey" && argv[1] && !argv[1].startsWith("-") ? `apikey ${argv[1]}` : argv[0];
    const line = `meridian ${command}: ${oneLine(e instanceof Error ? e.message : String(e))}`;
    if (wantsStack(argv)) process.stderr.write(`${line}\n${stackOf(e)}\n`);
    else process.stderr.write(e instanceof OperatorError ? `${line}\n` : `${line} (MERIDIAN_LOG_LEVEL=debug shows where)\n`);
    return e instanceof OperatorError ? e.exitCode : 1;
  }
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ");
}

/** The stack (and its causes') of a failure, printed at log level debug or trace only. */
function stackOf(e: unknown): string {
  const parts: string[] = [];
  for (let c: unknown = e; c instanceof Error; c = c.cause) parts.push(c.stack ?? c.message);
  return parts.join("\ncaused by: ");
}

function wantsStack(argv: string[]): boolean {
  const i = argv.findIndex((a) => a === "--log-level" || a.startsWith("--log-level="));
  const level = i < 0 ? process.env.MERIDIAN_LOG_LEVEL : argv[i].includes("=") ? argv[i].split("=")[1] : argv[i + 1];
  return level === "debug" || level === "trace";
}
