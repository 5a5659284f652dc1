// Whether the database answers (D57), for readiness and for the log. A sign
// of trouble (a call that found the database away, the change feed's
// connection lost, a readiness check) asks it a trivial query; no answer
// within 1 s starts an outage, logged once as a warning, and from then the
// query is asked every second until it is answered, which ends the outage
// with one info line. Requests meanwhile answer 503 on their own (D40).
import type { Logger } from "../log/logger.js";
import { within } from "../kernel/wait-limit.js";

/** D57: the database is ready when it answers a trivial query within this. */
export const READY_WITHIN_MS = 1_000;

export class Availability {
  private outage: { since: number } | undefined;
  private checking: Promise<string | undefined> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly ping: () => Promise<void>,
    private readonly logger: Logger,
    /** Told when an outage starts or ends (the gRPC health watchers). */
    private readonly onChange: () => void = () => {},
  ) {}

  /** Asks the database now (callers at the same moment share one query): undefined when it answered within 1 s, else why not. */
  check(): Promise<string | undefined> {
    this.checking ??= (async () => {
      try {
        await within(this.ping(), READY_WITHIN_MS, () => new Error(`no answer within ${READY_WITHIN_MS} ms`));
        this.ended();
        return undefined;
      } catch (e) {
        this.started(e);
        return `the database does not answer: ${describe(e)}`;
      } finally {
        this.checking = undefined;
      }
    })();
    return this.checking;
  }

  /** A sign that the database may be away: checked, unless an outage is already being watched. */
  suspect(): void {
    if (!this.outage && !this.stopped) void this.check();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private started(cause: unknown): void {
    if (this.outage || this.stopped) return;
    this.outage = { since: performance.now() };
    this.logger.warn({ cause: describe(cause) }, `database unavailable (${describe(cause)}): requests answer 503 until it is back`);
    this.onChange();
    this.recheck();
  }

  private ended(): void {
    if (!this.outage) return;
    const seconds = Math.round(performance.now() - this.outage.since) / 1000;
    this.outage = undefined;
    clearTimeout(this.timer);
    this.logger.info({ outageS: seconds }, `database available again after ${seconds} s`);
    this.onChange();
  }

  private recheck(): void {
    this.timer = setTimeout(() => {
      void this.check().finally(() => this.outage && !this.stopped && this.recheck());
    }, READY_WITHIN_MS);
    this.timer.unref();
  }
}

/** An error in a few words, for the log and the readiness answer: its code and message, no stack, no URL. */
function describe(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const code = (e as { code?: unknown }).code;
  return typeof code === "string" && !e.message.includes(code) ? `${code}: ${e.message}` : e.message;
}
