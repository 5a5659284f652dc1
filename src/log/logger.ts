// JSON lines on stderr (D34), so stdout stays for what the CLI prints. No line
// holds the password of a URL, whichever field or message carries one (D56).
import { pino, type Logger } from "pino";
import { maskUrlPasswords } from "../config/operator-error.js";

export type { Logger };

export function createLogger(level: string): Logger {
  return pino(
    { level, base: { service: "meridian" }, timestamp: pino.stdTimeFunctions.isoTime, hooks: { streamWrite: maskUrlPasswords } },
    pino.destination({ fd: 2, sync: false }),
  );
}
