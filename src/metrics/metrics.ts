// What Meridian counts (D43), in Prometheus' terms, through prom-client (the
// standard Node client: the text format, histograms, and Node's own process,
// GC and event-loop metrics). Labels are bounded: a method is an RPC's name
// or "unknown", never a path a client chose.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

export type Protocol = "grpc" | "grpc-web" | "connect" | "rest" | "http";

export class Metrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: "meridian_requests_total",
    help: "Requests answered, by method, protocol, outcome (a gRPC code name, ok for success, on every protocol) and HTTP status",
    labelNames: ["method", "protocol", "code", "status"] as const,
    registers: [this.registry],
  });
  readonly duration = new Histogram({
    name: "meridian_request_duration_seconds",
    help: "Time from a request's arrival to the end of its answer",
    labelNames: ["method", "protocol"] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  readonly inFlight = new Gauge({
    name: "meridian_requests_in_flight",
    help: "Requests and streams being answered now",
    labelNames: ["protocol"] as const,
    registers: [this.registry],
  });
  readonly valueRows = new Counter({
    name: "meridian_value_rows_streamed_total",
    help: "Rows of time series values read",
    registers: [this.registry],
  });
  readonly streamedBytes = new Counter({
    name: "meridian_value_bytes_streamed_total",
    help: "Bytes of streamed REST values answers handed to sockets",
    registers: [this.registry],
  });
  readonly cache = new Counter({
    name: "meridian_listing_cache_events_total",
    help: "Message listing cache hits, misses and evictions",
    labelNames: ["event"] as const,
    registers: [this.registry],
  });
  readonly blockCache = new Counter({
    name: "meridian_block_cache_events_total",
    help: "Block cache hits, misses and evictions (charts' block indexes and payloads)",
    labelNames: ["event"] as const,
    registers: [this.registry],
  });
  readonly blockCacheBytes = new Gauge({
    name: "meridian_block_cache_bytes",
    help: "Bytes the block cache holds by its own count (payloads, their segments, indexes), at most MERIDIAN_BLOCK_CACHE_MB",
    registers: [this.registry],
  });
  readonly commitGroups = new Histogram({
    name: "meridian_commit_group_writes",
    help: "Writes that shared one transaction and one commit (D66 group commit): _count is commits, _sum writes",
    buckets: [1, 2, 4, 8, 16, 32, 64],
    registers: [this.registry],
  });
  readonly lockWaits = new Counter({
    name: "meridian_db_lock_waits_total",
    help: "Calls that found the SQLite database locked and were retried later",
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: "meridian_" });
    // Gauges whose names end in _total, which Prometheus keeps for counters (promtool refuses
    // them, D59); each is the sum of its unsuffixed gauge by type, which stays.
    for (const kind of ["handles", "requests", "resources"]) this.registry.removeSingleMetric(`meridian_nodejs_active_${kind}_total`);
  }

  /** The text format, and its content type. */
  async scrape(): Promise<{ text: string; contentType: string }> {
    return { text: await this.registry.metrics(), contentType: this.registry.contentType };
  }
}
