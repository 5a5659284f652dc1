// D66: a call's answer waits until what it wrote is on disk. The backend says
// when (SQLite: an fsync of its WAL off the event loop, sqlite/wal-sync.ts;
// PostgreSQL: at once, its COMMIT is acknowledged by the server). One place
// for every write of every protocol, so no write path can answer early.
import type { Interceptor } from "@connectrpc/connect";

export function durableAnswersInterceptor(durable: () => Promise<void>): Interceptor {
  return (next) => async (req) => {
    const res = await next(req);
    // A streamed answer only reads; a unary one (a client stream's included) may have written.
    if (!res.stream) await durable();
    return res;
  };
}
