// Whose request this is, by network address (D54): the peer's address, or,
// when the peer is one of our own proxies (MERIDIAN_TRUSTED_PROXIES), the
// address it says it forwarded for in X-Forwarded-For. Anyone else's
// X-Forwarded-For is ignored: a client could otherwise name a new address on
// every request and never meet a per-address bound.
import { BlockList, isIP } from "node:net";
import type { NodeRequest } from "./node-types.js";

export class ClientAddress {
  private readonly trusted = new BlockList();
  private readonly any: boolean;

  /** @param proxies addresses and CIDR ranges ("10.0.0.0/8", "::1"); throws on one that is neither */
  constructor(proxies: readonly string[]) {
    for (const entry of proxies) {
      const [address, ...rest] = entry.split("/");
      const bits = rest.at(0);
      const extra = rest.at(1);
      const family = isIP(address);
      const prefix = Number(bits);
      const max = family === 4 ? 32 : 128;
      if (family === 0 || extra !== undefined || (bits !== undefined && (!/^\d+$/.test(bits) || prefix > max))) {
        throw new Error(`"${entry}" is not an IP address or CIDR range`);
      }
      const type = family === 4 ? "ipv4" : "ipv6";
      if (bits === undefined) this.trusted.addAddress(address, type);
      else this.trusted.addSubnet(address, prefix, type);
    }
    this.any = proxies.length > 0;
  }

  /** The client's address: the peer's, or the nearest untrusted hop of X-Forwarded-For when the peer is trusted. */
  of(req: NodeRequest): string {
    // An HTTP/2 request whose stream has ended has no socket any more, whatever the types say.
    const peer = plain((req.socket as NodeRequest["socket"] | undefined)?.remoteAddress ?? "");
    if (!this.any || !this.isTrusted(peer)) return peer;
    const header = req.headers["x-forwarded-for"];
    const hops = (Array.isArray(header) ? header.join(",") : (header ?? "")).split(",").map((h) => plain(h.trim()));
    // From the right: each trusted proxy appended the address it was called from.
    let client = peer;
    for (let i = hops.length - 1; i >= 0; i--) {
      if (isIP(hops[i]) === 0) break; // not an address: trust nothing further left
      client = hops[i];
      if (!this.isTrusted(client)) break;
    }
    return client;
  }

  private isTrusted(address: string): boolean {
    const family = isIP(address);
    return family !== 0 && this.trusted.check(address, family === 4 ? "ipv4" : "ipv6");
  }
}

/** "::ffff:10.1.2.3" (IPv4 on a dual-stack socket) as "10.1.2.3". */
function plain(address: string): string {
  return address.startsWith("::ffff:") && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}
