// A TCP relay between Meridian and PostgreSQL that a test can freeze (D40):
// connections stay open and bytes stop moving both ways, as with a database
// host that hangs or a network that drops packets without resetting.
// PostgreSQL answers nothing, so only Meridian's own limits end a wait.
import { createServer, connect, type Socket, type AddressInfo } from "node:net";

export interface TcpProxy {
  /** The URL with its host and port replaced by the relay's. */
  url: string;
  freeze(): void;
  thaw(): void;
  close(): Promise<void>;
}

export async function tcpProxy(target: string): Promise<TcpProxy> {
  const to = new URL(target);
  let frozen = false;
  /** Bytes held while frozen, with the socket each is for. */
  let held: [Socket, Buffer][] = [];
  const sockets = new Set<Socket>();
  const relay = (from: Socket, to: Socket) =>
    from.on("data", (chunk: Buffer) => {
      if (frozen) held.push([to, chunk]);
      else to.write(chunk);
    });
  const server = createServer((client) => {
    const upstream = connect(Number(to.port), to.hostname);
    relay(client, upstream);
    relay(upstream, client);
    const end = () => {
      for (const s of [client, upstream]) {
        sockets.delete(s);
        s.destroy();
      }
    };
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("error", end).on("close", end);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = new URL(target);
  url.hostname = "127.0.0.1";
  url.port = String((server.address() as AddressInfo).port);
  return {
    url: url.toString(),
    freeze() {
      frozen = true;
    },
    thaw() {
      frozen = false;
      for (const [to, chunk] of held) if (!to.destroyed) to.write(chunk);
      held = [];
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
