// Who may scrape /metrics (D43): MERIDIAN_METRICS is `off`, `public` (on the
// API's port, without credentials), or [host:]port of a listener of its own
// (default 127.0.0.1:9464, reachable from the machine only).
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Metrics } from "./metrics.js";

export type MetricsExposure = { kind: "off" } | { kind: "public" } | { kind: "own"; host: string; port: number };

export function parseMetricsSetting(text: string): MetricsExposure | undefined {
  const t = text.trim().toLowerCase();
  if (t === "off" || t === "public") return { kind: t };
  const m = /^(?:([^:]+|\[[0-9a-f:]+\]):)?(\d{1,5})$/.exec(t);
  if (!m || Number(m[2]) > 65535) return undefined;
  return { kind: "own", host: (m[1] ?? "127.0.0.1").replace(/^\[|\]$/g, ""), port: Number(m[2]) };
}

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
