// meridian serve (D31, D32): serves until SIGTERM or SIGINT, then drains.
import { startMeridian } from "../app/app.js";
import { SETTINGS, flagOf, loadSettings, settingsHelp } from "../config/settings.js";
import { parseCommand } from "./args.js";
import { missingNodeFlags } from "./node-flags.js";

export const SERVE_USAGE = `usage: meridian serve [flags]
  serves the API until SIGTERM or SIGINT, creating the database of MERIDIAN_DB if there is none.
  Every setting is an environment variable or this flag (the flag wins):
${settingsHelp()}
`;

export async function serveCommand(argv: string[]): Promise<number> {
  const options = Object.fromEntries(SETTINGS.map((s) => [flagOf(s.env), { type: "string" as const }]));
  const args = parseCommand(argv, SERVE_USAGE, options);
  if (!args) return 0;
  // Listen for signals before serving: a SIGTERM right after start-up must drain, not kill.
  const signal = new Promise<string>((resolve) => {
    process.once("SIGTERM", () => resolve("SIGTERM"));
    process.once("SIGINT", () => resolve("SIGINT"));
  });
  // A failure to start is an OperatorError, which main prints as one line (D56).
  const app = await startMeridian(loadSettings(process.env, args.values));
  const missing = missingNodeFlags();
  if (missing.length > 0) {
    app.logger.warn(
      { missing },
      `node was started without ${missing.join(" ")}: expect frequent full garbage collections under load; run bin/meridian.js itself, or node ${missing.join(" ")} bin/meridian.js serve`,
    );
  }
  app.logger.info({ signal: await signal }, "draining");
  await app.close();
  return 0;
}
