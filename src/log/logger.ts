// JSON lines on stderr (D34), so stdout stays for what the CLI prints.
import { pino, type Logger } from "pino";

export type { Logger };

export function createLogger(level: string): Logger {
  return pino({ level, base: { service: "meridian" }, timestamp: pino.stdTimeFunctions.isoTime }, pino.destination({ fd: 2, sync: false }));
}
