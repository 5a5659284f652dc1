// The listener of its own that /metrics may have (D43; which one, if any, is
// MERIDIAN_METRICS, read by config/settings.ts).
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Metrics } from "./metrics.js";

/** A listener that answers GET /metrics and nothing else; resolves with its URL. */
export async function listenForMetrics(metrics: Metrics, host: string, port: number): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    if (req.url !== "/metrics" || (req.method !== "GET" && req.method !== "HEAD")) {
      res.writeHead(404).end();
      return;
    }
    metrics.scrape().then(
      ({ text, contentType }) => res.writeHead(200, { "content-type": contentType }).end(text),
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const a = server.address() as AddressInfo;
  return {
    url: `http://${a.family === "IPv6" ? `[${a.address}]` : a.address}:${a.port}/metrics`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
