// The real request handler on a real port with its serving state held where
// a request sees it (D32, D57): how /healthz, /readyz and the health service
// answer while the server starts or drains, without timing a real start.
import { createConnectRouter } from "@connectrpc/connect";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { pino } from "pino";
import { Health } from "../../src/gen/grpc/health/v1/health_pb.js";
import { Cors } from "../../src/transport/cors.js";
import { HealthState, healthService, type ServingState } from "../../src/transport/health.js";
import { createNodeHandler } from "../../src/transport/node-handler.js";
import { ServiceRegistry } from "../../src/transport/service-registry.js";

/** Runs `use` against a handler in `state` (serving the health service, which reports `healthOf`), closing it after. */
export async function inServingState(state: ServingState, healthOf: string[], use: (url: string) => Promise<void>): Promise<void> {
  const health = new HealthState();
  health.set(state);
  const services = new ServiceRegistry(createConnectRouter(), []);
  services.add(Health, healthService(health, healthOf));
  const handler = createNodeHandler({
    services,
    shutdownSignal: new AbortController().signal,
    health,
    cors: new Cors([]),
    logger: pino({ level: "silent" }),
  });
  const srv = createServer(handler);
  await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve));
  try {
    await use(`http://127.0.0.1:${(srv.address() as AddressInfo).port}`);
  } finally {
    srv.close();
  }
}
