// Serving state for /healthz and the gRPC health service (D32).
import type { ServiceImpl } from "@connectrpc/connect";
import { Health, HealthCheckResponse_ServingStatus as Status } from "../gen/grpc/health/v1/health_pb.js";
import { failure } from "./errors.js";

export type ServingState = "starting" | "serving" | "draining";

export class HealthState {
  private current: ServingState = "starting";
  private readonly waiters = new Set<() => void>();

  get state(): ServingState {
    return this.current;
  }

  set(state: ServingState): void {
    this.current = state;
    for (const w of this.waiters) w();
    this.waiters.clear();
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
  const statusOf = (service: string) => {
    if (service !== "" && !services.includes(service)) throw failure("SERVICE_NOT_FOUND", `unknown service ${service}`);
    return state.state === "serving" ? Status.SERVING : Status.NOT_SERVING;
  };
  return {
    check: (req) => ({ status: statusOf(req.service) }),
    async *watch(req, ctx) {
      let last: Status | undefined;
      while (!ctx.signal.aborted) {
        const status = service(req.service);
        if (status !== last) yield { status };
        last = status;
        await state.changed(ctx.signal);
      }
      function service(name: string): Status {
        return name === "" || services.includes(name) ? statusOf(name) : Status.SERVICE_UNKNOWN;
      }
    },
  };
}
