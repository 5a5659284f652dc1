// D40 D70: while no host of MERIDIAN_DB answers, a replica tries each at most
// a few times a second (the pool's backoff), not as fast as refusals come
// back. postgres.js applied its backoff only after a connection it had once
// opened was lost: on a multi-host URL, a connection that failed to open
// went on to the next host and round again at once, about 5,800 attempts and
// 0.4 of a core a second for a pool of 10 whose hosts all refused.
// patches/postgres+3.4.9.patch waits the backoff after each round of hosts.
// Real sockets, no database needed: three ports that close every connection.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer, type Server } from "node:net";
import { connectPostgres } from "../../src/postgres/database.js";

describe("D40 D70 reconnect pace", () => {
  const servers: Server[] = [];
  const attempts: number[] = [0, 0, 0];
  let url = "";

  beforeAll(async () => {
    for (let i = 0; i < 3; i++) {
      const s = createServer((socket) => {
        attempts[i]++;
        socket.destroy(); // a host that is up but not serving (a node shutting down, a port with nothing behind it)
      });
      await new Promise<void>((z) => s.listen(0, "127.0.0.1", () => z()));
      servers.push(s);
    }
    url = `postgres://m@${servers.map((s) => `127.0.0.1:${(s.address() as { port: number }).port}`).join(",")}/db?target_session_attrs=read-write`;
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => new Promise((z) => s.close(z))));
  });

  it("D40 D70 while every host refuses, a pool of 10 tries each host at most a few times a second", async () => {
    const sql = connectPostgres({ url, poolSize: 10, statementTimeoutMs: 1_000, connectTimeoutS: 1 });
    const t0 = performance.now();
    let going = true;
    // Callers as a replica's requests would be: each query given up at 1 s, the next one after.
    const callers = Array.from({ length: 10 }, async () => {
      while (going) {
        await Promise.race([sql`SELECT 1`.catch(() => {}), new Promise((z) => setTimeout(z, 1_000))]);
      }
    });
    await new Promise((z) => setTimeout(z, 3_000));
    going = false;
    await Promise.all(callers);
    const seconds = (performance.now() - t0) / 1_000;
    await sql.end({ timeout: 0 });
    // The backoff reaches 0.25-0.5 s a round: 10 connections make at most about 40 rounds a second.
    const perHostPerSecond = attempts.map((n) => n / seconds);
    expect(Math.max(...perHostPerSecond)).toBeLessThan(60);
    expect(Math.min(...perHostPerSecond)).toBeGreaterThan(0); // every host is tried
  });
});
