// Serving state for /healthz, /readyz and the gRPC health service (D32, D57).
// /healthz is liveness: the process serves. Readiness adds the database: the
// server is serving (not starting, not draining) and the database answers a
// trivial query within 1 s; the gRPC health service reports readiness, since
// its callers (load balancers) ask whether to send calls here.
import type { ServiceImpl } from "@connectrpc/connect";
import { Health, HealthCheckResponse_ServingStatus as Status } from "../gen/grpc/health/v1/health_pb.js";
import { failure } from "../kernel/errors.js";

export type ServingState = "starting" | "serving" | "draining";

/** Asks the database: undefined when it answered in time, else why not (app/availability.ts). */
export interface DatabaseCheck {
  check(): Promise<string | undefined>;
}

export class HealthState {
  private current: ServingState = "starting";
  private readonly waiters = new Set<() => void>();

  constructor(private readonly database: DatabaseCheck = { check: async () => undefined }) {}

  get state(): ServingState {
    return this.current;
  }

  set(state: ServingState): void {
    this.current = state;
    this.touch();
  }

  /** Wakes the watchers: readiness may have changed (the database went away or came back). */
  touch(): void {
    for (const w of this.waiters) w();
    this.waiters.clear();
  }

  /** Why the server is not ready (D57), or undefined when it is. */
  async notReady(): Promise<string | undefined> {
    if (this.current === "starting") return "the server is starting";
    if (this.current === "draining") return "the server is draining: it is shutting down";
    return this.database.check();
  }

  changed(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.waiters.delete(done);
        signal.removeEventListener("abort", done);
        resolve();
      };
      this.waiters.add(done);
      signal.addEventListener("abort", done);
    });
  }
}

/** The services a health check may name: "" means the whole server. */
export function healthService(state: HealthState, services: readonly string[]): Partial<ServiceImpl<typeof Health>> {
  const known = (service: string) => service === "" || services.includes(service);
  const readiness = async () => ((await state.notReady()) === undefined ? Status.SERVING : Status.NOT_SERVING);
  return {
    async check(req) {
      if (!known(req.service)) throw failure("SERVICE_NOT_FOUND", `unknown service ${req.service}`);
      return { status: await readiness() };
    },
    async *watch(req, ctx) {
      let last: Status | undefined;
      while (!ctx.signal.aborted) {
        const changed = state.changed(ctx.signal); // before asking: a change meanwhile is not missed
        const status = known(req.service) ? await readiness() : Status.SERVICE_UNKNOWN;
        if (status !== last) yield { status };
        last = status;
        // D57: the drain waits for ordinary requests only; a watcher (a load balancer) has read
        // NOT_SERVING and reconnects to another replica.
        if (state.state === "draining") return;
        await changed;
      }
    },
  };
}
