// A webhook endpoint for D63 tests: a real HTTP server on a local port that
// keeps what it receives and checks signatures as a receiver would.
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export const SECRET = "whsec-test-0123456789abcdef";
/** The server's setting that lets a webhook reach the local receiver over http:. */
export const WEBHOOK_ENV = { MERIDIAN_WEBHOOK_HTTP_HOSTS: "127.0.0.1" };

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  raw: string;
  body: { id: string; type: string; createdAt: string; data: { message: { id: number; title: string; featureId: string | null } } };
  at: number;
}

type Answer = { status: number; body?: string; headers?: Record<string, string> } | "hang";

/** A webhook endpoint on a local port: keeps what it receives, answers as `answer` says. */
export async function startReceiver(answer: (r: Received, n: number) => Answer = () => ({ status: 204 })) {
  const received: Received[] = [];
  const waiters: (() => void)[] = [];
  const server: Server = createServer((req, res) => {
    let raw = "";
    req.on("data", (d) => (raw += d));
    req.on("end", () => {
      const r: Received = { path: req.url ?? "", headers: req.headers, raw, body: JSON.parse(raw), at: Date.now() };
      received.push(r);
      waiters.splice(0).forEach((w) => w());
      const a = answer(r, received.length);
      if (a === "hang") return; // never answers
      res.writeHead(a.status, a.headers ?? {}).end(a.body ?? "");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return {
    url,
    received,
    /** Resolves once `pred` holds of what was received (polls on each arrival; fails after `ms`). */
    async until(pred: (r: Received[]) => boolean, ms = 15_000): Promise<Received[]> {
      const deadline = Date.now() + ms;
      while (!pred(received)) {
        if (Date.now() > deadline)
          throw new Error(`receiver: condition not met in ${ms} ms; got ${received.map((r) => r.body.type).join(", ")}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 200);
        });
      }
      return received;
    },
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

/** Checks the Meridian-Signature header as a receiver would: v1 = HMAC-SHA256(secret, "<t>.<body>"), compared in constant time. */
export function signatureValid(r: Received, secret = SECRET): boolean {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(r.headers["meridian-signature"]));
  if (!m) return false;
  const expected = createHmac("sha256", secret).update(`${m[1]}.${r.raw}`).digest();
  return timingSafeEqual(expected, Buffer.from(m[2], "hex")) && Math.abs(Number(m[1]) - Date.now() / 1000) < 60;
}
