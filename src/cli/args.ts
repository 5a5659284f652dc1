// Each command's arguments: parsed strictly, `--help` prints the command's
// usage, and a mistake is one line naming it, then the usage (exit 2).
import { parseArgs, type ParseArgsConfig } from "node:util";
import { didYouMean } from "../config/nearest.js";

/**
 * A mistake in how a command was called: its message, then the command's usage, exit 2. A typo
 * of a known name is answered with that name instead of the usage, which would bury it.
 */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly usage: string,
    readonly suggested = false,
  ) {
    super(message);
  }
}

type Options = NonNullable<ParseArgsConfig["options"]>;

/** The parsed arguments, or undefined when --help was asked (the usage is then printed). */
export function parseCommand<O extends Options>(argv: string[], usage: string, options: O, positionals = false) {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(usage);
    return undefined;
  }
  try {
    return parseArgs({ args: argv, options, strict: true, allowPositionals: positionals });
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (!code?.startsWith("ERR_PARSE_ARGS")) throw e;
    // Node's text for an unknown option goes on about argument terminators; the option is what matters.
    const unknown = code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" ? /'([^']+)'/.exec((e as Error).message)?.[1] : undefined;
    if (!unknown) throw new UsageError((e as Error).message, usage);
    const meant = didYouMean(
      unknown.replace(/=.*$/, ""),
      Object.keys(options).map((o) => `--${o}`),
    );
    throw new UsageError(`unknown option ${unknown}${meant}`, usage, meant !== "");
  }
}
